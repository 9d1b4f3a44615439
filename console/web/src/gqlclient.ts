// The urql client: queries and mutations over HTTP POST, subscriptions over
// the given graphql-ws client, and every failure for want of a session
// reported to the guard (which sends the user to the login page once).
import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange } from 'urql'
import type { Client as WSClient } from 'graphql-ws'
import { isUnauthenticated, type SessionGuard } from './session'

export interface ClientOptions {
  url: string
  guard: SessionGuard
  /** for subscriptions; without it subscriptions fail */
  ws?: WSClient
  /** replaces the global fetch (tests) */
  fetch?: typeof fetch
}

export function makeClient(opts: ClientOptions): Client {
  const { ws, guard } = opts
  return new Client({
    url: opts.url,
    // The server takes POST only (a GET could be sent cross-site).
    preferGetMethod: false,
    fetchOptions: { credentials: 'same-origin' },
    fetch: opts.fetch,
    requestPolicy: 'cache-and-network',
    exchanges: [
      mapExchange({
        onError(error) {
          if (isUnauthenticated(error)) guard.expired()
        },
      }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query ?? '' }
          return {
            subscribe(sink) {
              if (!ws) {
                sink.error(new Error('no websocket for subscriptions'))
                return { unsubscribe() {} }
              }
              return { unsubscribe: ws.subscribe(input, sink) }
            },
          }
        },
      }),
    ],
  })
}
