// The console's one GraphQL client: HTTP for queries and mutations, one
// graphql-ws socket per tab for every subscription. Both carry the session
// cookie (same origin), so nothing here handles tokens.
import { createClient as createWSClient } from 'graphql-ws'
import { makeClient } from './gqlclient'
import { navigate } from './router'
import { SessionGuard, WS_UNAUTHORIZED, loginError } from './session'

export const session = new SessionGuard(() => {
  const here = window.location.pathname + window.location.search
  navigate(`/login?return=${encodeURIComponent(here)}`)
})

function wsURL(): string {
  const proto = window.location.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${proto}//${window.location.host}/api/graphql`
}

const reconnectListeners = new Set<() => void>()

/**
 * onReconnect calls f each time the websocket comes back after it dropped:
 * events sent meanwhile are lost, so what they would have changed must be
 * fetched again. It returns how to stop.
 */
export function onReconnect(f: () => void): () => void {
  reconnectListeners.add(f)
  return () => reconnectListeners.delete(f)
}

function closeCode(ev: unknown): number | undefined {
  return (ev as { code?: number } | null)?.code
}

export const ws = createWSClient({
  url: wsURL,
  lazy: true,
  // A socket closed for a bad token must not reconnect with the same cookie.
  shouldRetry: (ev) => closeCode(ev) !== WS_UNAUTHORIZED,
  on: {
    connected: (_socket, _payload, wasRetry) => {
      if (wasRetry) for (const f of reconnectListeners) f()
    },
    closed: (ev) => {
      if (closeCode(ev) === WS_UNAUTHORIZED) session.expired()
    },
  },
})

export const client = makeClient({ url: '/api/graphql', guard: session, ws })

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
