// The web terminal's protocol (see docs/terminal.md): the socket's URL,
// the messages each side sends, and what a close code means to a person.
import type { AppRef } from '../router'

export interface TerminalTarget {
  app: AppRef
  namespace: string
  pod: string
  container: string
}

/** terminalURL is the websocket URL of a terminal into target, on the page's own origin. */
export function terminalURL(loc: { protocol: string; host: string }, t: TerminalTarget): string {
  const q = new URLSearchParams({ app: t.app.name, namespace: t.namespace, pod: t.pod, container: t.container })
  if (t.app.namespace) q.set('appNamespace', t.app.namespace)
  const proto = loc.protocol === 'https:' ? 'wss:' : 'ws:'
  return `${proto}//${loc.host}/api/terminal?${q.toString()}`
}

/** stdin and resize are the messages the console sends. */
export function stdin(data: string): string {
  return JSON.stringify({ operation: 'stdin', data })
}

export function resize(rows: number, cols: number): string {
  return JSON.stringify({ operation: 'resize', rows, cols })
}

/** output is the text of a server message, or null for anything but stdout. */
export function output(raw: unknown): string | null {
  if (typeof raw !== 'string') return null
  try {
    const m = JSON.parse(raw) as { operation?: unknown; data?: unknown }
    return m.operation === 'stdout' && typeof m.data === 'string' ? m.data : null
  } catch {
    return null
  }
}

/** closedText says why a terminal closed, from its close code and reason. */
export function closedText(code: number, reason: string): string {
  if (code === 1000) return reason ? `Closed: ${reason}.` : 'Closed.'
  if (code === 1006) return 'The connection to the server was lost, or the server refused it (is your session still valid?).'
  return reason ? `Closed: ${reason}.` : `Closed (code ${code}).`
}
