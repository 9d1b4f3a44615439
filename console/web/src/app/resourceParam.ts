// The selected resource lives in the URL (?resource=group/kind/namespace/name)
// so a link shares it. The core group and cluster-scoped objects have empty
// parts: "/Pod/default/web-1" or "rbac.authorization.k8s.io/ClusterRole//view".

/** ResourceId names one object of the application. */
export interface ResourceId {
  group: string
  kind: string
  namespace: string
  name: string
}

/** formatResource is the URL form of a resource. */
export function formatResource(r: ResourceId): string {
  return [r.group, r.kind, r.namespace, r.name].join('/')
}

/** parseResource reads the URL form, or returns null when it is not one. */
export function parseResource(s: string | null): ResourceId | null {
  if (!s) return null
  const parts = s.split('/')
  if (parts.length !== 4) return null
  const [group, kind, namespace, name] = parts as [string, string, string, string]
  if (!kind || !name) return null
  return { group, kind, namespace, name }
}

/** sameResource compares two ids. */
export function sameResource(a: ResourceId, b: ResourceId): boolean {
  return a.group === b.group && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name
}

/** withResource returns the query string with the resource set (or removed when null). */
export function withResource(search: string, r: ResourceId | null): string {
  const q = new URLSearchParams(search)
  if (r) q.set('resource', formatResource(r))
  else q.delete('resource')
  const s = q.toString()
  return s ? `?${s}` : ''
}
