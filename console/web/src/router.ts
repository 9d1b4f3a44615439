// A tiny history-API router: the console has few pages, and the URL (path
// and query string) is the state a link shares.
import { useSyncExternalStore } from 'react'

const NAVIGATE = 'graphcd:navigate'

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange)
  window.addEventListener(NAVIGATE, onChange)
  return () => {
    window.removeEventListener('popstate', onChange)
    window.removeEventListener(NAVIGATE, onChange)
  }
}

function snapshot(): string {
  return window.location.pathname + window.location.search
}

/** useLocation re-renders on navigation and returns the current path and query string. */
export function useLocation(): { path: string; search: string } {
  const href = useSyncExternalStore(subscribe, snapshot)
  const q = href.indexOf('?')
  return q < 0 ? { path: href, search: '' } : { path: href.slice(0, q), search: href.slice(q) }
}

/** navigate changes the URL; replace keeps the history entry (e.g. while typing). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === snapshot()) return
  if (opts.replace) window.history.replaceState(null, '', to)
  else window.history.pushState(null, '', to)
  window.dispatchEvent(new Event(NAVIGATE))
}

/** safeReturnPath keeps a return path only when it stays on this origin. */
export function safeReturnPath(p: string | null | undefined, fallback = '/applications'): string {
  if (!p || !p.startsWith('/') || p.startsWith('//') || p.startsWith('/\\') || p.startsWith('/login')) return fallback
  return p
}

/** AppRef names an application: namespace null for one in the server's namespace. */
export interface AppRef {
  name: string
  namespace: string | null
}

/**
 * appPath is the path of an application's page: /applications/NAME for an app
 * in the server's namespace, /applications/NAMESPACE/NAME (as in Argo CD) for
 * one elsewhere.
 */
export function appPath(name: string, namespace?: string | null): string {
  const n = encodeURIComponent(name)
  return namespace ? `/applications/${encodeURIComponent(namespace)}/${n}` : `/applications/${n}`
}

/** appRef is the application of /applications/NAME or /applications/NAMESPACE/NAME, or null. */
export function appRef(path: string): AppRef | null {
  const m = /^\/applications\/([^/]+)(?:\/([^/]+))?\/?$/.exec(path)
  if (!m) return null
  const first = decodeSegment(m[1] ?? '')
  if (m[2] === undefined) return first ? { name: first, namespace: null } : null
  const name = decodeSegment(m[2])
  return first && name ? { name, namespace: first } : null
}

/**
 * appLabel is how a list names an application: NAMESPACE/NAME outside the
 * server's namespace (serverNamespace, null while unknown), NAME in it.
 */
export function appLabel(app: { name: string; namespace: string }, serverNamespace: string | null): string {
  return serverNamespace === null || app.namespace === serverNamespace ? app.name : `${app.namespace}/${app.name}`
}

/** decodeSegment decodes one percent-encoded path segment; null when it does not decode. */
export function decodeSegment(s: string): string | null {
  try {
    return decodeURIComponent(s)
  } catch {
    return null
  }
}
