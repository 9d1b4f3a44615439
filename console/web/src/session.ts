// Session expiry: the first request that finds the session gone sends the
// user to the login page, once. Later failures (other queries in flight,
// the websocket closing) do nothing until a login succeeds, so an expired
// session never turns into a storm of redirects or retries.
import type { CombinedError } from '@urql/core'

/** isUnauthenticated tells whether a GraphQL result failed for want of a valid session. */
export function isUnauthenticated(err: CombinedError | undefined | null): boolean {
  if (!err) return false
  const status = (err.response as { status?: number } | undefined)?.status
  if (status === 401) return true
  return err.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED')
}

/** The websocket close code graphcd uses for a bad or expired token. */
export const WS_UNAUTHORIZED = 4401

export class SessionGuard {
  private redirected = false
  private readonly goToLogin: () => void

  constructor(goToLogin: () => void) {
    this.goToLogin = goToLogin
  }

  /** expired sends the user to the login page unless it already did; it reports whether it did now. */
  expired(): boolean {
    if (this.redirected) return false
    this.redirected = true
    this.goToLogin()
    return true
  }

  /** loggedIn re-arms the guard after a successful login. */
  loggedIn(): void {
    this.redirected = false
  }
}

/** loginError turns a failed login response into the sentence the form shows. */
export function loginError(status: number, retryAfter: string | null, body: string): string {
  let text = body.trim()
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown }
    const m = parsed.error ?? parsed.message
    if (typeof m === 'string') text = m
  } catch {
    // not JSON: the body is the message
  }
  if (status === 429) {
    const wait = retryAfter && /^\d+$/.test(retryAfter) ? `${retryAfter} s` : 'a while'
    return `${text || 'Too many failed logins.'} Try again in ${wait}.`
  }
  return text || `Login failed (HTTP ${status}).`
}
