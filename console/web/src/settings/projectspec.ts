// Edits of a project's spec. The detail page reads the spec from the
// project's YAML, changes one list, and sends the whole spec back, so
// fields the page does not show (orphanedResources, signatureKeys ...)
// stay as they were. Every edit returns a new spec.
import { parse, stringify } from 'yaml'
import { splitList } from '../ui/input'

export type Spec = Record<string, unknown>
type Obj = Record<string, unknown>

/** specOf is the spec of a project's YAML; empty when it has none. */
export function specOf(projectYaml: string): Spec {
  const doc = parse(projectYaml) as Obj | null
  const spec = doc?.spec
  return spec !== null && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Spec) : {}
}

/** resourceVersionOf is an object's metadata.resourceVersion as a number, or null. */
function resourceVersionOf(yaml: string): bigint | null {
  const meta = (parse(yaml) as Obj | null)?.metadata as Obj | undefined
  const v = meta?.resourceVersion
  return typeof v === 'string' && /^[0-9]+$/.test(v) ? BigInt(v) : null
}

/**
 * newerThan reports whether the object in yaml was written after the one
 * in than, by metadata.resourceVersion (etcd's revision, which grows with
 * every write); orSame accepts the same version too. False when either
 * has none.
 */
export function newerThan(yaml: string, than: string, orSame = false): boolean {
  const a = resourceVersionOf(yaml)
  const b = resourceVersionOf(than)
  return a !== null && b !== null && (a > b || (orSame && a === b))
}

/** specText is the spec as updateProjectSpec takes it. */
export function specText(spec: Spec): string {
  return stringify(spec, { lineWidth: 0 })
}

/** listOf is the list at key, or an empty one. */
export function listOf<T = unknown>(o: Obj, key: string): T[] {
  const v = o[key]
  return Array.isArray(v) ? (v as T[]) : []
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** addTo appends item to the list at key unless it holds an equal item already. */
export function addTo<T extends Obj>(o: T, key: string, item: unknown): T {
  const list = listOf(o, key)
  if (list.some((x) => same(x, item))) return o
  return { ...o, [key]: [...list, item] }
}

/** removeAt drops the item at index of the list at key, and the key with its last item. */
export function removeAt<T extends Obj>(o: T, key: string, index: number): T {
  const list = listOf(o, key).filter((_, i) => i !== index)
  const out: Obj = { ...o, [key]: list }
  if (list.length === 0) delete out[key]
  return out as T
}

/** withRole changes the role named name with f. */
export function withRole(spec: Spec, name: string, f: (role: Obj) => Obj): Spec {
  return { ...spec, roles: listOf<Obj>(spec, 'roles').map((r) => (r.name === name ? f(r) : r)) }
}

/** addRole adds an empty role, or says why it cannot. */
export function addRole(spec: Spec, name: string, description: string): Spec | { error: string } {
  if (!/^[a-zA-Z0-9]([-_a-zA-Z0-9]*[a-zA-Z0-9])?$/.test(name)) return { error: 'A role name has letters, digits, "-" and "_", and starts and ends with a letter or digit.' }
  if (listOf<Obj>(spec, 'roles').some((r) => r.name === name)) return { error: `The project has a role ${name} already.` }
  const role: Obj = { name }
  if (description) role.description = description
  return { ...spec, roles: [...listOf(spec, 'roles'), role] }
}

export interface WindowForm {
  kind: 'allow' | 'deny'
  schedule: string
  duration: string
  applications: string
  namespaces: string
  clusters: string
  manualSync: boolean
  timeZone: string
}

/** syncWindow turns the form into a spec.syncWindows entry, or says what is missing. */
export function syncWindow(f: WindowForm): Obj | { error: string } {
  if (f.schedule.trim().split(/\s+/).length !== 5) return { error: 'Schedule is a cron expression of five fields, e.g. "0 22 * * *".' }
  if (!/^(\d+(\.\d+)?(s|m|h))+$/.test(f.duration.trim())) return { error: 'Duration is a length such as 1h or 30m.' }
  const w: Obj = { kind: f.kind, schedule: f.schedule.trim(), duration: f.duration.trim() }
  const apps = splitList(f.applications)
  const nss = splitList(f.namespaces)
  const clusters = splitList(f.clusters)
  if (apps.length + nss.length + clusters.length === 0) return { error: 'Name the applications, namespaces or clusters the window applies to.' }
  if (apps.length) w.applications = apps
  if (nss.length) w.namespaces = nss
  if (clusters.length) w.clusters = clusters
  if (f.manualSync) w.manualSync = true
  if (f.timeZone.trim()) w.timeZone = f.timeZone.trim()
  return w
}

/** newProjectManifest is the manifest createProject takes for a new project. */
export function newProjectManifest(name: string, description: string): string {
  const spec: Obj = { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] }
  if (description) spec.description = description
  return stringify({ apiVersion: 'graphcd.io/v1alpha1', kind: 'AppProject', metadata: { name }, spec })
}
