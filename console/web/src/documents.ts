// The GraphQL operations of the console. `npm run codegen` turns each into a
// typed document in ./gql.
import { graphql } from './gql'

export const SessionQuery = graphql(`
  query Session {
    me {
      ...Who
    }
    settings {
      url
      ssoProviders
      uiBannerContent
      uiBannerURL
    }
  }
`)

export const AppRowFragment = graphql(`
  fragment AppRow on Application {
    ...AppSummary
    spec {
      destination {
        ...Destination
      }
      sources {
        repoURL
      }
    }
    status {
      health {
        ...Health
      }
      operationState {
        phase
        message
      }
      reconciledAt
    }
  }
`)

export const ApplicationsQuery = graphql(`
  query Applications($first: Int!, $after: String, $filter: ApplicationFilter, $orderBy: ApplicationOrder) {
    applications(first: $first, after: $after, filter: $filter, orderBy: $orderBy) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        ...AppRow
      }
    }
  }
`)

export const ProjectsQuery = graphql(`
  query ProjectNames {
    projects(first: 500) {
      nodes {
        name
        namespace
      }
    }
  }
`)

export const ApplicationEventsSubscription = graphql(`
  subscription ApplicationEvents {
    applicationEvents(filter: { types: [SyncStatusChanged, HealthChanged, OperationPhaseChanged] }) {
      lagged
      type
      name
      namespace
      syncStatus
      health
      operationPhase
      message
      application {
        ...AppRow
      }
    }
  }
`)

export const StatusCountsQuery = graphql(`
  query StatusCounts(
    $synced: ApplicationFilter
    $outOfSync: ApplicationFilter
    $healthy: ApplicationFilter
    $progressing: ApplicationFilter
    $degraded: ApplicationFilter
    $missing: ApplicationFilter
  ) {
    synced: applications(first: 0, filter: $synced) {
      totalCount
    }
    outOfSync: applications(first: 0, filter: $outOfSync) {
      totalCount
    }
    healthy: applications(first: 0, filter: $healthy) {
      totalCount
    }
    progressing: applications(first: 0, filter: $progressing) {
      totalCount
    }
    degraded: applications(first: 0, filter: $degraded) {
      totalCount
    }
    missing: applications(first: 0, filter: $missing) {
      totalCount
    }
  }
`)

export const SyncApplicationMutation = graphql(`
  mutation SyncApplication($name: String!, $namespace: String) {
    syncApplication(input: { application: { name: $name, namespace: $namespace } }) {
      ...AppRow
    }
  }
`)

// An application looked up without a namespace is found in the server's
// own, so its namespace is the server's (which RBAC objects leave out).
export const ServerNamespaceProbe = graphql(`
  query ServerNamespaceProbe($name: String!) {
    application(name: $name) {
      namespace
    }
  }
`)

export const ApplicationRowQuery = graphql(`
  query ApplicationRow($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      ...AppRow
    }
  }
`)
