// The GraphQL fragments documents of several areas select: one selection
// per shape, so a field added here reaches every document that shows it.
// `npm run codegen` reads them here and inlines them into every document
// that spreads them, and into its type, in ./gql: nothing imports this file.
import { graphql } from './gql'

export const SourceFragment = graphql(`
  fragment Source on ApplicationSource {
    repoURL
    path
    chart
    ref
    targetRevision
  }
`)

export const DestinationFragment = graphql(`
  fragment Destination on ApplicationDestination {
    server
    name
    namespace
  }
`)

export const HealthFragment = graphql(`
  fragment Health on HealthStatus {
    status
    message
  }
`)

export const InitiatorFragment = graphql(`
  fragment Initiator on OperationInitiator {
    username
    automated
  }
`)

/** What every view of an application shows: who it is, where it comes from, how it compares. */
export const AppSummaryFragment = graphql(`
  fragment AppSummary on Application {
    id
    name
    namespace
    project
    deleting
    spec {
      source {
        ...Source
      }
      syncPolicy {
        automated {
          enabled
        }
      }
    }
    status {
      sync {
        status
        revision
      }
    }
  }
`)

/** An operation's phase and when it ran. */
export const OperationSummaryFragment = graphql(`
  fragment OperationSummary on OperationState {
    phase
    message
    startedAt
    finishedAt
  }
`)

export const EventRowFragment = graphql(`
  fragment EventRow on KubernetesEvent {
    type
    reason
    note
    time
    count
  }
`)

/** A token's record; its value is never stored. */
export const TokenFragment = graphql(`
  fragment Token on JWTToken {
    id
    issuedAt
    expiresAt
  }
`)

/** A token just issued, with its value: shown this once. */
export const IssuedTokenFragment = graphql(`
  fragment IssuedToken on NewToken {
    id
    token
    issuedAt
    expiresAt
  }
`)

export const WhoFragment = graphql(`
  fragment Who on Me {
    loggedIn
    username
    groups
  }
`)

/** One audit entry, as the audit page's list and its live updates show it. */
export const AuditEntryFragment = graphql(`
  fragment AuditEntryRow on AuditEntry {
    id
    time
    user
    groups
    clientAddress
    operationName
    mutation
    object {
      kind
      group
      namespace
      name
      project
    }
    patch
    patchOmitted
    outcome
    errorCode
  }
`)

/** A deep link (application.links, project.links, resource.links). */
export const LinkFragment = graphql(`
  fragment Link on DeepLink {
    title
    url
    description
    iconClass
  }
`)
