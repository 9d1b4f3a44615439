// The console's one GraphQL client: HTTP for queries and mutations, one
// graphql-ws socket per tab for every subscription. Both carry the session
// cookie (same origin), so nothing here handles tokens.
import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange } from 'urql'
import { createClient as createWSClient } from 'graphql-ws'
import { navigate } from './router'
import { SessionGuard, WS_UNAUTHORIZED, isUnauthenticated, loginError } from './session'

export const session = new SessionGuard(() => {
  const here = window.location.pathname + window.location.search
  navigate(`/login?return=${encodeURIComponent(here)}`)
})

function wsURL(): string {
  const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${proto}//${window.location.host}/api/graphql`
}

export const ws = createWSClient({
  url: wsURL,
  lazy: true,
  // A socket closed for a bad token must not reconnect with the same cookie.
  shouldRetry: (ev) => !(ev instanceof CloseEvent && ev.code === WS_UNAUTHORIZED),
  on: {
    closed: (ev) => {
      if (ev instanceof CloseEvent && ev.code === WS_UNAUTHORIZED) session.expired()
    },
  },
})

export const client = new Client({
  url: '/api/graphql',
  // The server takes POST only (a GET could be sent cross-site).
  preferGetMethod: false,
  fetchOptions: { credentials: 'same-origin' },
  requestPolicy: 'cache-and-network',
  exchanges: [
    mapExchange({
      onError(error) {
        if (isUnauthenticated(error)) session.expired()
      },
    }),
    cacheExchange,
    fetchExchange,
    subscriptionExchange({
      forwardSubscription(request) {
        const input = { ...request, query: request.query ?? '' }
        return {
          subscribe(sink) {
            const unsubscribe = ws.subscribe(input, sink)
            return { unsubscribe }
          },
        }
      },
    }),
  ],
})

/** login posts a local account's credentials; it resolves to an error text or null on success. */
export async function login(username: string, password: string): Promise<string | null> {
  let res: Response
  try {
    res = await fetch('/auth/login', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password }),
    })
  } catch {
    return 'The server cannot be reached. Check your connection and try again.'
  }
  if (res.ok) {
    session.loggedIn()
    // A socket opened before the login carries no session: start afresh.
    ws.terminate()
    return null
  }
  return loginError(res.status, res.headers.get('Retry-After'), await res.text())
}

export async function logout(): Promise<void> {
  try {
    await fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' })
  } finally {
    ws.terminate()
    window.location.assign('/login')
  }
}
