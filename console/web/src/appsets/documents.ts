// The GraphQL operations of the ApplicationSet pages: the list, one set
// followed live, the dry run behind Preview, and the writes.
import { graphql } from '../gql'

/** What the list shows of a set, and the top of its page. */
export const SetRowFragment = graphql(`
  fragment SetRow on ApplicationSet {
    id
    name
    namespace
    project
    deleting
    spec {
      generators
      strategy
    }
    status {
      resourcesCount
      conditions {
        type
        status
        reason
        message
        lastTransitionTime
      }
    }
  }
`)

export const ApplicationSetsQuery = graphql(`
  query ApplicationSets($first: Int!, $after: String, $filter: ApplicationSetFilter) {
    applicationSets(first: $first, after: $after, filter: $filter) {
      totalCount
      nodes {
        ...SetRow
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`)

/** One set's page: its status in full, its manifest, and what the caller may do. */
export const SetPageFragment = graphql(`
  fragment SetPage on ApplicationSet {
    ...SetRow
    createdAt
    yaml
    update: can(action: "update")
    delete: can(action: "delete")
    spec {
      template {
        name
      }
      syncPolicy {
        applicationsSync
        preserveResourcesOnDeletion
      }
    }
    status {
      resources {
        name
        namespace
        status
        health {
          ...Health
        }
      }
      generated {
        name
        generator
        params
        action
        message
      }
      applicationStatus {
        application
        status
        message
        step
        targetRevisions
        lastTransitionTime
      }
    }
  }
`)

export const ApplicationSetSubscription = graphql(`
  subscription ApplicationSetPage($name: String!, $namespace: String) {
    applicationSet(name: $name, namespace: $namespace) {
      ...SetPage
    }
  }
`)

export const DryRunSetQuery = graphql(`
  query DryRunApplicationSet($manifest: String!) {
    dryRunApplicationSet(input: { manifest: $manifest }) {
      totalCount
      failedCount
      elements {
        generator
        params
        error
        application {
          name
          namespace
          project
          spec {
            destination {
              ...Destination
            }
            source {
              ...Source
            }
            sources {
              repoURL
            }
          }
        }
      }
    }
  }
`)

export const CreateSetMutation = graphql(`
  mutation CreateApplicationSet($manifest: String!) {
    createApplicationSet(input: { manifest: $manifest }) {
      id
      name
      namespace
    }
  }
`)

export const UpdateSetMutation = graphql(`
  mutation UpdateApplicationSet($name: String!, $namespace: String, $spec: String!) {
    updateApplicationSet(input: { name: $name, namespace: $namespace, spec: $spec }) {
      ...SetPage
    }
  }
`)

export const DeleteSetMutation = graphql(`
  mutation DeleteApplicationSet($name: String!, $namespace: String) {
    deleteApplicationSet(name: $name, namespace: $namespace)
  }
`)
