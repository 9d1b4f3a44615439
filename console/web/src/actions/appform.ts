// The application form and the manifest it stands for. The form edits a
// few well-known fields of a manifest and leaves everything else in it
// (Helm values, labels, ignoreDifferences ...) as it was, so the form and
// the YAML tab can take turns without losing anything.
import { parse, stringify } from 'yaml'
import { appPath } from '../router'

export interface AppForm {
  name: string
  project: string
  repoURL: string
  /** a directory in a Git repository, or a chart from a Helm repository */
  sourceKind: 'path' | 'chart'
  path: string
  chart: string
  targetRevision: string
  /** destination by server URL or by cluster name */
  destinationBy: 'server' | 'name'
  server: string
  clusterName: string
  namespace: string
  autoSync: boolean
  prune: boolean
  selfHeal: boolean
  syncOptions: string[]
}

type Obj = Record<string, unknown>

function obj(v: unknown): Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {}
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : ''
}

/** newManifest is where a new application starts. */
export function newManifest(): Obj {
  return {
    apiVersion: 'graphcd.io/v1alpha1',
    kind: 'Application',
    metadata: { name: '' },
    spec: {
      project: 'default',
      source: { repoURL: '', path: '', targetRevision: 'HEAD' },
      destination: { server: 'https://kubernetes.default.svc', namespace: '' },
    },
  }
}

/**
 * editableManifest is a manifest (an application's, a set's) as the server prints it,
 * without what only the server writes (status, resourceVersion ...).
 */
export function editableManifest(m: Obj): Obj {
  const meta = obj(m.metadata)
  const kept: Obj = { name: meta.name }
  for (const k of ['namespace', 'labels', 'annotations', 'finalizers']) if (meta[k] !== undefined) kept[k] = meta[k]
  return { apiVersion: m.apiVersion, kind: m.kind, metadata: kept, spec: m.spec }
}

/**
 * createdAppPath is the page to open after creating manifest as created:
 * /applications/NAMESPACE/NAME when the manifest named a namespace (which
 * may lie outside the server's), /applications/NAME when the server put
 * the app in its own.
 */
export function createdAppPath(m: Obj, created: { name: string; namespace: string }): string {
  return appPath(created.name, str(obj(m.metadata).namespace) === '' ? null : created.namespace)
}

/** formOf reads the form's fields out of a manifest. */
export function formOf(m: Obj): AppForm {
  const spec = obj(m.spec)
  const sources = Array.isArray(spec.sources) ? spec.sources : []
  const src = obj(spec.source ?? sources[0])
  const dest = obj(spec.destination)
  const policy = obj(spec.syncPolicy)
  const auto = policy.automated === undefined || policy.automated === null ? null : obj(policy.automated)
  return {
    name: str(obj(m.metadata).name),
    project: str(spec.project),
    repoURL: str(src.repoURL),
    sourceKind: str(src.chart) !== '' ? 'chart' : 'path',
    path: str(src.path),
    chart: str(src.chart),
    targetRevision: str(src.targetRevision),
    destinationBy: str(dest.name) !== '' && str(dest.server) === '' ? 'name' : 'server',
    server: str(dest.server),
    clusterName: str(dest.name),
    namespace: str(dest.namespace),
    autoSync: auto !== null && auto.enabled !== false,
    prune: auto?.prune === true,
    selfHeal: auto?.selfHeal === true,
    syncOptions: Array.isArray(policy.syncOptions) ? policy.syncOptions.map(str).filter((s) => s !== '') : [],
  }
}

// set writes v at key, or removes the key for an empty value, so the
// manifest carries no empty fields the user never wrote.
function set(o: Obj, key: string, v: unknown) {
  if (v === '' || v === undefined || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)) delete o[key]
  else o[key] = v
}

/** withForm writes the form into a copy of manifest m, keeping every field the form does not show. */
export function withForm(m: Obj, f: AppForm): Obj {
  const out = structuredClone(m)
  const meta = { ...obj(out.metadata) }
  meta.name = f.name
  out.metadata = meta
  const spec = { ...obj(out.spec) }
  set(spec, 'project', f.project)
  // A multi-source application keeps its sources; the form edits the first.
  const multi = Array.isArray(spec.sources) && spec.sources.length > 0
  const src = { ...obj(multi ? (spec.sources as unknown[])[0] : spec.source) }
  set(src, 'repoURL', f.repoURL)
  set(src, 'path', f.sourceKind === 'path' ? f.path : '')
  set(src, 'chart', f.sourceKind === 'chart' ? f.chart : '')
  set(src, 'targetRevision', f.targetRevision)
  if (multi) spec.sources = [src, ...(spec.sources as unknown[]).slice(1)]
  else spec.source = src
  const dest = { ...obj(spec.destination) }
  set(dest, 'server', f.destinationBy === 'server' ? f.server : '')
  set(dest, 'name', f.destinationBy === 'name' ? f.clusterName : '')
  set(dest, 'namespace', f.namespace)
  spec.destination = dest
  const policy = { ...obj(spec.syncPolicy) }
  if (f.autoSync) {
    const auto = { ...obj(policy.automated) }
    delete auto.enabled // on is the default
    auto.prune = f.prune
    auto.selfHeal = f.selfHeal
    policy.automated = auto
  } else {
    delete policy.automated
  }
  set(policy, 'syncOptions', f.syncOptions)
  set(spec, 'syncPolicy', policy)
  out.spec = spec
  return out
}

/** toYaml prints a manifest for the YAML tab. */
export function toYaml(m: Obj): string {
  return stringify(m, { lineWidth: 0 })
}

/** fromYaml reads the YAML tab: a manifest of kind (an Application unless said), or why it is not one. */
export function fromYaml(text: string, kind = 'Application'): { manifest: Obj } | { error: string } {
  let doc: unknown
  try {
    doc = parse(text)
  } catch (e) {
    return { error: `Not valid YAML: ${e instanceof Error ? e.message : String(e)}` }
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return { error: `The YAML must be one ${kind} object (a mapping with apiVersion, kind, metadata and spec).` }
  const m = doc as Obj
  if (m.kind !== undefined && m.kind !== kind) return { error: `kind is ${str(m.kind) || 'not a string'}; it must be ${kind}.` }
  return { manifest: m }
}

/** formProblems lists what must be filled in before the manifest is sent. */
export function formProblems(f: AppForm): string[] {
  const out: string[] = []
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(f.name) || f.name.length > 253) out.push('Name: lower-case letters, digits, "-" and "."; starting and ending with a letter or digit.')
  if (f.repoURL.trim() === '') out.push('Repository URL is required.')
  if (f.sourceKind === 'chart' && f.chart.trim() === '') out.push('Chart is required for a Helm chart.')
  if (f.destinationBy === 'server' ? f.server.trim() === '' : f.clusterName.trim() === '') out.push('Destination cluster is required.')
  return out
}

/** specYaml is the manifest's spec alone, as updateApplicationSpec takes it. */
export function specYaml(m: Obj): string {
  return stringify(obj(m.spec), { lineWidth: 0 })
}
