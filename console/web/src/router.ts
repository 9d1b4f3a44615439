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

/** AppRef names an application (or an ApplicationSet): namespace null for one in the server's namespace. */
export interface AppRef {
  name: string
  namespace: string | null
}

/**
 * objectPath is the path of an object's page under base: base/NAME for one
 * in the server's namespace, base/NAMESPACE/NAME (as in Argo CD) for one
 * elsewhere.
 */
function objectPath(base: string, name: string, namespace?: string | null): string {
  const n = encodeURIComponent(name)
  return namespace ? `${base}/${encodeURIComponent(namespace)}/${n}` : `${base}/${n}`
}

/** objectRef is the object of base/NAME or base/NAMESPACE/NAME, or null. */
function objectRef(base: string, path: string): AppRef | null {
  if (!path.startsWith(`${base}/`)) return null
  const m = /^([^/]+)(?:\/([^/]+))?\/?$/.exec(path.slice(base.length + 1))
  if (!m) return null
  const first = decodeSegment(m[1] ?? '')
  if (m[2] === undefined) return first ? { name: first, namespace: null } : null
  const name = decodeSegment(m[2])
  return first && name ? { name, namespace: first } : null
}

/** appPath is the path of an application's page (see objectPath). */
export function appPath(name: string, namespace?: string | null): string {
  return objectPath('/applications', name, namespace)
}

/** appRef is the application of /applications/NAME or /applications/NAMESPACE/NAME, or null. */
export function appRef(path: string): AppRef | null {
  return objectRef('/applications', path)
}

/** SETS_PATH is the ApplicationSets list; each set's page is under it. */
export const SETS_PATH = '/applicationsets'

/** setPath is the path of an ApplicationSet's page (see objectPath). */
export function setPath(name: string, namespace?: string | null): string {
  return objectPath(SETS_PATH, name, namespace)
}

/** setRef is the ApplicationSet of /applicationsets/NAME or /applicationsets/NAMESPACE/NAME, or null. */
export function setRef(path: string): AppRef | null {
  return objectRef(SETS_PATH, path)
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
