// The Parameters tab's model: what each source of an application passes to
// its renderer (Helm parameters and values, Kustomize images, name prefix
// and suffix and replicas, directory options, plugin env), read from the
// spec and written back into it leaving every other field as it was.
// Pure functions, tested without a browser.

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {})
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '')

export type SourceType = 'Helm' | 'Kustomize' | 'Directory' | 'Plugin'
export const SOURCE_TYPES: readonly SourceType[] = ['Helm', 'Kustomize', 'Directory', 'Plugin']

export interface NameValue {
  name: string
  value: string
}

export interface SourceParams {
  type: SourceType
  helm: { valueFiles: string[]; parameters: (NameValue & { forceString: boolean })[]; values: string; releaseName: string }
  kustomize: { namePrefix: string; nameSuffix: string; namespace: string; images: string[]; replicas: NameValue[] }
  directory: { recurse: boolean; include: string; exclude: string }
  plugin: { name: string; env: NameValue[] }
}

/** sourcesOf lists the spec's sources: spec.source alone, or spec.sources. */
export function sourcesOf(spec: unknown): Obj[] {
  const s = obj(spec)
  if (s.source !== undefined && s.source !== null) return [obj(s.source)]
  return arr(s.sources).map(obj)
}

/**
 * sourceType is how a source renders: the type the controller reported
 * (status.sourceType / sourceTypes) when it names one, else what the spec
 * says (a chart or helm options: Helm; kustomize options: Kustomize; a
 * plugin: Plugin), else Directory.
 */
export function sourceType(source: Obj, reported: string | null | undefined): SourceType {
  if ((SOURCE_TYPES as readonly string[]).includes(reported ?? '')) return reported as SourceType
  if (str(source.chart) || source.helm) return 'Helm'
  if (source.kustomize) return 'Kustomize'
  if (source.plugin) return 'Plugin'
  return 'Directory'
}

function pairs(v: unknown, valueKey: string): NameValue[] {
  return arr(v)
    .map(obj)
    .map((p) => ({ name: str(p.name), value: str(p[valueKey]) }))
}

/** paramsOf reads a source's parameters; absent or malformed fields read as empty. */
export function paramsOf(source: Obj, type: SourceType): SourceParams {
  const h = obj(source.helm)
  const k = obj(source.kustomize)
  const d = obj(source.directory)
  const p = obj(source.plugin)
  return {
    type,
    helm: {
      valueFiles: arr(h.valueFiles).map(str).filter(Boolean),
      parameters: arr(h.parameters)
        .map(obj)
        .map((x) => ({ name: str(x.name), value: str(x.value), forceString: x.forceString === true })),
      values: str(h.values),
      releaseName: str(h.releaseName),
    },
    kustomize: {
      namePrefix: str(k.namePrefix),
      nameSuffix: str(k.nameSuffix),
      namespace: str(k.namespace),
      images: arr(k.images).map(str).filter(Boolean),
      replicas: pairs(k.replicas, 'count'),
    },
    directory: { recurse: d.recurse === true, include: str(d.include), exclude: str(d.exclude) },
    plugin: { name: str(p.name), env: pairs(p.env, 'value') },
  }
}

// set writes v at key, or removes key when v is empty.
function set(o: Obj, key: string, v: unknown): void {
  const empty = v === '' || v === false || v === undefined || (Array.isArray(v) && v.length === 0)
  if (empty) delete o[key]
  else o[key] = v
}

// section writes the options object of a source, or removes it when it is left empty.
function section(source: Obj, key: string, write: (o: Obj) => void): void {
  const o = { ...obj(source[key]) }
  write(o)
  if (Object.keys(o).length === 0) delete source[key]
  else source[key] = o
}

const named = <T extends { name: string }>(list: T[]): T[] => list.map((x) => ({ ...x, name: x.name.trim() })).filter((x) => x.name !== '')

/** replicaCount writes a count as a number when it is one, as Argo CD's manifests do. */
function replicaCount(v: string): number | string {
  const t = v.trim()
  return /^\d+$/.test(t) ? Number(t) : t
}

/**
 * withParams is spec with the options of p.type of source index replaced
 * by p's (entries without a name left out, empty options removed); the
 * spec's other fields, and the source's other options, stay as they were.
 */
export function withParams(spec: unknown, index: number, p: SourceParams): Obj {
  const out: Obj = { ...obj(spec) }
  const single = out.source !== undefined && out.source !== null
  const sources = single ? [obj(out.source)] : arr(out.sources).map(obj)
  if (index < 0 || index >= sources.length) return out
  const source: Obj = { ...sources[index] }
  if (p.type === 'Helm') {
    section(source, 'helm', (h) => {
      set(h, 'valueFiles', p.helm.valueFiles.map((f) => f.trim()).filter(Boolean))
      set(
        h,
        'parameters',
        named(p.helm.parameters).map((x) => (x.forceString ? { name: x.name, value: x.value, forceString: true } : { name: x.name, value: x.value })),
      )
      set(h, 'values', p.helm.values.trim() === '' ? '' : p.helm.values)
      set(h, 'releaseName', p.helm.releaseName.trim())
    })
  } else if (p.type === 'Kustomize') {
    section(source, 'kustomize', (k) => {
      set(k, 'namePrefix', p.kustomize.namePrefix.trim())
      set(k, 'nameSuffix', p.kustomize.nameSuffix.trim())
      set(k, 'namespace', p.kustomize.namespace.trim())
      set(k, 'images', p.kustomize.images.map((i) => i.trim()).filter(Boolean))
      set(
        k,
        'replicas',
        named(p.kustomize.replicas).map((r) => ({ name: r.name, count: replicaCount(r.value) })),
      )
    })
  } else if (p.type === 'Directory') {
    section(source, 'directory', (d) => {
      set(d, 'recurse', p.directory.recurse)
      set(d, 'include', p.directory.include.trim())
      set(d, 'exclude', p.directory.exclude.trim())
    })
  } else {
    section(source, 'plugin', (o) => {
      set(o, 'name', p.plugin.name.trim())
      set(o, 'env', named(p.plugin.env).map((e) => ({ name: e.name, value: e.value })))
    })
  }
  if (single) out.source = source
  else out.sources = sources.map((s, i) => (i === index ? source : s))
  return out
}

/** paramProblems lists what keeps p from saving. */
export function paramProblems(p: SourceParams): string[] {
  const out: string[] = []
  if (p.type === 'Kustomize') {
    for (const r of p.kustomize.replicas) if (r.name.trim() !== '' && !/^\d+$/.test(r.value.trim())) out.push(`The replica count of ${r.name.trim()} is not a whole number.`)
  }
  if (p.type === 'Plugin') {
    for (const e of p.plugin.env) if (e.name.trim() !== '' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(e.name.trim())) out.push(`${e.name.trim()} is not an environment variable name.`)
  }
  return out
}
