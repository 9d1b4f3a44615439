// How a failed request reads in the console.
import type { CombinedError } from 'urql'

/** errorMessage is the server's own message when it gave one, else the client's. */
export function errorMessage(error: CombinedError): string {
  return error.graphQLErrors[0]?.message ?? error.message
}

/** errorText says what went wrong in words a user can act on: the server's own message when it gave one. */
export function errorText(what: string, error: CombinedError): string {
  const gql = error.graphQLErrors[0]
  if (gql) return `${what}: ${gql.message}`
  return `${what}: the server could not be reached (${error.networkError?.message ?? error.message}).`
}
