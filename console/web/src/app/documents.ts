// The GraphQL operations of the application page. `npm run codegen` turns
// each into a typed document in ../gql.
import { graphql } from '../gql'

export const AppHeaderFragment = graphql(`
  fragment AppHeader on Application {
    ...AppRow
    spec {
      sources {
        ...Source
      }
    }
    links {
      ...Link
    }
    status {
      sync {
        revisions
      }
      operationState {
        ...OperationSummary
      }
      conditions {
        type
        message
      }
    }
  }
`)

export const TreeFragment = graphql(`
  fragment Tree on ResourceTree {
    revision
    reconciledAt
    truncated
    nodes {
      group
      version
      kind
      namespace
      name
      uid
      parentRefs {
        uid
      }
      health {
        ...Health
      }
      sync
      info {
        name
        value
      }
      images
      missing
      createdAt
    }
    orphanedNodes {
      group
      kind
      namespace
      name
    }
    orphanedCount
  }
`)

export const ApplicationPageQuery = graphql(`
  query ApplicationPage($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      ...AppHeader
      resourceTree {
        ...Tree
      }
    }
  }
`)

export const ApplicationPageSubscription = graphql(`
  subscription ApplicationPageLive($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      ...AppHeader
    }
  }
`)

export const ResourceTreeSubscription = graphql(`
  subscription ResourceTreeLive($name: String!, $namespace: String) {
    resourceTree(name: $name, namespace: $namespace) {
      ...Tree
    }
  }
`)

export const ManagedResourceQuery = graphql(`
  query ManagedResource($app: String!, $appNamespace: String, $group: String!, $kind: String!, $namespace: String!, $name: String!) {
    application(name: $app, namespace: $appNamespace) {
      id
      managedResources(filter: { group: $group, kind: $kind, namespace: $namespace, name: $name }) {
        status
        requiresPruning
        hook
        live
        desired
        diff
      }
    }
  }
`)

// Any object of the app's tree as its cluster has it now, with the
// Events about it.
export const LiveResourceQuery = graphql(`
  query LiveResource($app: String!, $appNamespace: String, $group: String!, $kind: String!, $namespace: String!, $name: String!, $events: Int!) {
    application(name: $app, namespace: $appNamespace) {
      id
      liveResource(group: $group, kind: $kind, namespace: $namespace, name: $name) {
        manifest
        events(first: $events) {
          ...EventRow
        }
        links {
          ...Link
        }
      }
    }
  }
`)

export const AppEventsQuery = graphql(`
  query AppEvents($app: String!, $appNamespace: String) {
    application(name: $app, namespace: $appNamespace) {
      id
      events(first: 200) {
        ...EventRow
      }
    }
  }
`)

export const PodLogsSubscription = graphql(`
  subscription PodLogs($app: String!, $appNamespace: String, $namespace: String!, $pod: String!, $container: String, $tailLines: Int!) {
    podLogs(application: { name: $app, namespace: $appNamespace }, namespace: $namespace, pod: $pod, container: $container, tailLines: $tailLines)
  }
`)

// The live manifests the network view reads backends, selectors and Pod
// template labels from: the application's Ingresses, Services and
// workloads.
export const NetworkQuery = graphql(`
  query AppNetwork($app: String!, $appNamespace: String) {
    application(name: $app, namespace: $appNamespace) {
      id
      ingresses: managedResources(filter: { kind: "Ingress" }) {
        ...NetObject
      }
      services: managedResources(filter: { kind: "Service" }) {
        ...NetObject
      }
      deployments: managedResources(filter: { kind: "Deployment" }) {
        ...NetObject
      }
      statefulSets: managedResources(filter: { kind: "StatefulSet" }) {
        ...NetObject
      }
      daemonSets: managedResources(filter: { kind: "DaemonSet" }) {
        ...NetObject
      }
      replicaSets: managedResources(filter: { kind: "ReplicaSet" }) {
        ...NetObject
      }
      jobs: managedResources(filter: { kind: "Job" }) {
        ...NetObject
      }
      cronJobs: managedResources(filter: { kind: "CronJob" }) {
        ...NetObject
      }
      pods: managedResources(filter: { kind: "Pod" }) {
        ...NetObject
      }
    }
  }
`)

export const NetObjectFragment = graphql(`
  fragment NetObject on ManagedResource {
    group
    kind
    namespace
    name
    live
  }
`)

// The application's spec as YAML (the Parameters tab edits it), what kind
// each source is, and whether the caller may change it.
export const ParametersQuery = graphql(`
  query AppParameters($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      id
      name
      namespace
      yaml
      update: can(action: "update")
      status {
        sourceType
        sourceTypes
      }
    }
  }
`)

// Whether status badges are on, and the server's external URL for the
// badge snippet.
export const BadgeSettingsQuery = graphql(`
  query AppBadgeSettings {
    settings {
      url
      statusBadgeEnabled
    }
  }
`)

export const SaveParametersMutation = graphql(`
  mutation AppParametersSave($input: UpdateApplicationSpecInput!) {
    updateApplicationSpec(input: $input) {
      id
      yaml
    }
  }
`)

// One delivery of a notification, as the Notifications view lists it.
export const NotificationDeliveryFragment = graphql(`
  fragment NotificationDeliveryRow on NotificationDelivery {
    key
    trigger
    service
    recipient
    outcome
    attempts
    error
    time
  }
`)

// A page of the application's notification deliveries, newest first.
export const NotificationDeliveriesQuery = graphql(`
  query AppNotificationDeliveries($name: String!, $namespace: String, $first: Int!, $after: String) {
    application(name: $name, namespace: $namespace) {
      id
      notificationDeliveries(first: $first, after: $after) {
        totalCount
        nodes {
          ...NotificationDeliveryRow
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`)

// Each delivery of the application as its record changes (new, or a new
// outcome, attempt or error); records there before it started are not
// sent.
export const NotificationDeliveriesSubscription = graphql(`
  subscription AppNotificationDeliveriesLive($name: String!, $namespace: String) {
    notificationDeliveries(name: $name, namespace: $namespace) {
      ...NotificationDeliveryRow
    }
  }
`)

// What the application is subscribed to, where each is declared, and
// whether the caller may change it.
export const NotificationSubscriptionsQuery = graphql(`
  query AppNotificationSubscriptions($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      id
      name
      namespace
      project
      update: can(action: "update")
      ...AppNotificationSubscriptions
    }
  }
`)

// The subscriptions as of one version of the application: the query's,
// or a change's answer.
export const AppNotificationSubscriptionsFragment = graphql(`
  fragment AppNotificationSubscriptions on Application {
    resourceVersion
    notificationSubscriptions {
      trigger
      service
      recipients
      source
      annotation
      defaultTriggers
      triggerDefined
    }
  }
`)

export const SubscribeNotificationMutation = graphql(`
  mutation AppSubscribeNotification($input: SubscribeNotificationInput!) {
    subscribeNotification(input: $input) {
      id
      ...AppNotificationSubscriptions
    }
  }
`)

export const UnsubscribeNotificationMutation = graphql(`
  mutation AppUnsubscribeNotification($input: UnsubscribeNotificationInput!) {
    unsubscribeNotification(input: $input) {
      id
      ...AppNotificationSubscriptions
    }
  }
`)
