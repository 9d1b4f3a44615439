// The GraphQL operations of the application actions: what the action bar
// follows live, and the mutations it sends.
import { graphql } from '../gql'

export const ActionsAppFields = graphql(`
  fragment ActionsApp on Application {
    ...AppSummary
    spec {
      syncPolicy {
        syncOptions
        retry {
          limit
          backoff {
            duration
            factor
            maxDuration
          }
        }
      }
    }
    status {
      resources {
        group
        version
        kind
        namespace
        name
        status
        hook
        requiresPruning
        syncWave
      }
      history {
        id
        revision
        deployedAt
        deployStartedAt
        source {
          ...Source
        }
        initiatedBy {
          ...Initiator
        }
      }
      operationState {
        ...OperationSummary
        retryCount
        operation {
          sync {
            revision
            prune
            dryRun
          }
          initiatedBy {
            ...Initiator
          }
        }
        syncResult {
          revision
          resources {
            group
            version
            kind
            namespace
            name
            status
            message
            hookType
            hookPhase
            syncPhase
            syncWave
          }
        }
      }
    }
    operation {
      initiatedBy {
        username
      }
    }
  }
`)

// The application now and after every change: the bar's state and the
// operation's progress come from it, without polling.
export const ActionsAppSubscription = graphql(`
  subscription ActionsApp($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      ...ActionsApp
    }
  }
`)

// What the caller may do to the application, as the server decides it.
export const AppPermissionsQuery = graphql(`
  query AppPermissions($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      id
      sync: can(action: "sync")
      update: can(action: "update")
      delete: can(action: "delete")
    }
  }
`)

export const SyncMutation = graphql(`
  mutation ActionsSync($input: SyncApplicationInput!) {
    syncApplication(input: $input) {
      ...ActionsApp
    }
  }
`)

export const RollbackMutation = graphql(`
  mutation ActionsRollback($input: RollbackApplicationInput!) {
    rollbackApplication(input: $input) {
      ...ActionsApp
    }
  }
`)

export const RefreshMutation = graphql(`
  mutation ActionsRefresh($input: RefreshApplicationInput!) {
    refreshApplication(input: $input) {
      id
      status {
        reconciledAt
      }
    }
  }
`)

export const TerminateMutation = graphql(`
  mutation ActionsTerminate($input: ApplicationRef!) {
    terminateOperation(input: $input) {
      ...ActionsApp
    }
  }
`)

export const DeleteMutation = graphql(`
  mutation ActionsDelete($input: DeleteApplicationInput!) {
    deleteApplication(input: $input)
  }
`)

// The manifest an edit starts from.
export const AppYamlQuery = graphql(`
  query ActionsAppYaml($name: String!, $namespace: String) {
    application(name: $name, namespace: $namespace) {
      id
      yaml
    }
  }
`)

export const CreateAppMutation = graphql(`
  mutation ActionsCreateApp($input: CreateApplicationInput!) {
    createApplication(input: $input) {
      id
      name
      namespace
    }
  }
`)

export const UpdateAppSpecMutation = graphql(`
  mutation ActionsUpdateAppSpec($input: UpdateApplicationSpecInput!) {
    updateApplicationSpec(input: $input) {
      id
      name
    }
  }
`)

// Projects and clusters to choose from in the application form.
export const FormChoicesQuery = graphql(`
  query ActionsFormChoices {
    projects(first: 500) {
      nodes {
        id
        name
      }
    }
    clusters(first: 500) {
      nodes {
        id
        name
        server
      }
    }
  }
`)
