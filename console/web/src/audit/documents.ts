// The GraphQL operations of the audit page.
import { graphql } from '../gql'

export const AuditLogQuery = graphql(`
  query AuditLog($first: Int!, $after: String, $filter: AuditFilter) {
    auditLog(first: $first, after: $after, filter: $filter) {
      nodes {
        ...AuditEntryRow
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`)

export const AuditEventsSubscription = graphql(`
  subscription AuditEvents($filter: AuditFilter) {
    auditEvents(filter: $filter) {
      ...AuditEntryRow
    }
  }
`)
