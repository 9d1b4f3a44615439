import type { CombinedError } from 'urql'

/** errorText says what went wrong in words a user can act on: the server's own message when it gave one. */
export function errorText(what: string, error: CombinedError): string {
  const gql = error.graphQLErrors[0]
  if (gql) return `${what}: ${gql.message}`
  return `${what}: the server could not be reached (${error.networkError?.message ?? error.message}).`
}
