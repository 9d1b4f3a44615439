// What a page of one object (an application, an ApplicationSet) shows when it cannot be loaded.
import type { CombinedError } from 'urql'

export type LoadState =
  | { kind: 'loading' }
  | { kind: 'ready' }
  | { kind: 'notFound' }
  | { kind: 'forbidden'; message: string }
  | { kind: 'error'; message: string }

/** errorState says what a failed load means for the page. */
export function errorState(error: CombinedError): LoadState {
  const g = error.graphQLErrors[0]
  const code = g?.extensions?.code
  if (code === 'FORBIDDEN') return { kind: 'forbidden', message: g?.message ?? '' }
  if (code === 'NOT_FOUND') return { kind: 'notFound' }
  if (error.networkError) return { kind: 'error', message: 'The server cannot be reached. The page will update when the connection is back.' }
  return { kind: 'error', message: g?.message ?? error.message }
}
