// The GraphQL operations of the resource actions menu.
import { graphql } from '../gql'

export const ResourceActionsQuery = graphql(`
  query ResourceActions($app: String!, $appNamespace: String, $group: String!, $kind: String!, $namespace: String!, $name: String!) {
    application(name: $app, namespace: $appNamespace) {
      id
      liveResource(group: $group, kind: $kind, namespace: $namespace, name: $name) {
        actions {
          name
          disabled
          displayName
          params {
            name
            type
            default
          }
        }
      }
    }
  }
`)

export const RunResourceActionMutation = graphql(`
  mutation RunResourceAction($input: ApplicationResourceInput!, $action: String!, $params: [ResourceActionParamInput!]!) {
    runResourceAction(input: $input, action: $action, params: $params) {
      operation
      group
      kind
      namespace
      name
    }
  }
`)
