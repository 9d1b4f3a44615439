import { CombinedError } from '@urql/core'
import { GraphQLError } from 'graphql'
import { describe, expect, it } from 'vitest'
import { SessionGuard, isUnauthenticated, loginError } from './session'

function gqlError(code: string): CombinedError {
  return new CombinedError({ graphQLErrors: [new GraphQLError('x', { extensions: { code } })] })
}

describe('isUnauthenticated', () => {
  it('knows the UNAUTHENTICATED code and HTTP 401', () => {
    expect(isUnauthenticated(gqlError('UNAUTHENTICATED'))).toBe(true)
    expect(isUnauthenticated(new CombinedError({ networkError: new Error('401'), response: { status: 401 } }))).toBe(true)
  })
  it('ignores other errors', () => {
    expect(isUnauthenticated(gqlError('FORBIDDEN'))).toBe(false)
    expect(isUnauthenticated(new CombinedError({ networkError: new Error('down'), response: { status: 502 } }))).toBe(false)
    expect(isUnauthenticated(undefined)).toBe(false)
  })
})

describe('SessionGuard', () => {
  it('redirects once however many requests fail, and again after a login', () => {
    let redirects = 0
    const g = new SessionGuard(() => redirects++)
    expect(g.expired()).toBe(true)
    for (let i = 0; i < 50; i++) g.expired()
    expect(redirects).toBe(1)
    g.loggedIn()
    expect(g.expired()).toBe(true)
    expect(redirects).toBe(2)
  })
})

describe('loginError', () => {
  it('shows the server text', () => {
    expect(loginError(401, null, '{"error":"invalid username or password"}\n')).toBe('invalid username or password')
  })
  it('shows when to retry after too many attempts', () => {
    expect(loginError(429, '42', '{"error":"too many failed logins"}')).toBe('too many failed logins Try again in 42 s.')
  })
  it('copes with a body that is not JSON', () => {
    expect(loginError(502, null, 'Bad Gateway')).toBe('Bad Gateway')
    expect(loginError(500, null, '')).toBe('Login failed (HTTP 500).')
  })
})
