import { describe, expect, it } from 'vitest'
import { makeClient } from './gqlclient'
import { SessionGuard } from './session'

// A fetch that answers every GraphQL request like graphcd does for an
// expired session: HTTP 401 for a bad token, or 200 with UNAUTHENTICATED.
function serverSaying(status: number, code: string) {
  let calls = 0
  const fetch = async (): Promise<Response> => {
    calls++
    return new Response(JSON.stringify({ data: null, errors: [{ message: 'log in first', extensions: { code } }] }), {
      status,
      headers: { 'Content-Type': 'application/json' },
    })
  }
  return { fetch: fetch as typeof globalThis.fetch, calls: () => calls }
}

async function queryMany(fetch: typeof globalThis.fetch, guard: SessionGuard, n: number) {
  const client = makeClient({ url: 'http://graphcd.test/api/graphql', guard, fetch })
  await Promise.all(
    Array.from({ length: n }, (_, i) => client.query(`query Q${i} { me { username } }`, {}, { requestPolicy: 'network-only' }).toPromise()),
  )
}

describe('session expiry through the client', () => {
  it.each([
    [200, 'UNAUTHENTICATED'],
    [401, 'UNAUTHENTICATED'],
  ])('HTTP %d %s sends the user to the login page once', async (status, code) => {
    let redirects = 0
    const guard = new SessionGuard(() => redirects++)
    const server = serverSaying(status, code)
    await queryMany(server.fetch, guard, 5)
    expect(server.calls()).toBe(5) // every query was sent once: no retries
    expect(redirects).toBe(1)

    guard.loggedIn()
    await queryMany(server.fetch, guard, 3)
    expect(redirects).toBe(2)
    expect(server.calls()).toBe(8)
  })

  it('leaves the user where they are on other errors', async () => {
    let redirects = 0
    const guard = new SessionGuard(() => redirects++)
    await queryMany(serverSaying(200, 'FORBIDDEN').fetch, guard, 3)
    expect(redirects).toBe(0)
  })
})
