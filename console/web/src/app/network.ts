// The network view: which Services each Ingress sends traffic to, and which
// of the application's Pods each Service selects, as Argo CD's network
// view shows. The tree says who owns whom; the live manifests of the
// application's Ingresses, Services and workloads say the rest (backends,
// selectors, Pod template labels). Pure functions, tested without a
// browser; bad or partial manifests give fewer edges, never an error.
import { parse } from 'yaml'
import { isPod } from './pods'
import { childrenOf, nodeId, type TreeResource } from './tree'

/** LiveObject is one managed resource with its live manifest (YAML or JSON). */
export interface LiveObject {
  group: string
  kind: string
  namespace: string
  name: string
  live: string
}

export interface NetIngress {
  resource: TreeResource
  hosts: string[]
  /** Names of the backend Services, in the Ingress's namespace, in order. */
  backends: string[]
}

export interface NetService {
  resource: TreeResource
  /** The workloads (Deployments, StatefulSets ...) whose Pods it selects. */
  workloads: TreeResource[]
  pods: TreeResource[]
  /** Whether some Ingress of the application routes to it. */
  exposed: boolean
}

export interface NetworkView {
  ingresses: NetIngress[]
  services: NetService[]
}

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {})
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const str = (v: unknown): string => (typeof v === 'string' ? v : '')

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, x] of Object.entries(obj(v))) if (typeof x === 'string') out[k] = x
  return out
}

/** parseLive parses a live manifest; an empty object when it is empty or does not parse. */
export function parseLive(live: string): Obj {
  if (!live) return {}
  try {
    return obj(parse(live))
  } catch {
    return {}
  }
}

/** ingressBackends lists the Service names an Ingress (networking.k8s.io/v1, or the old extensions form) routes to. */
export function ingressBackends(ing: Obj): string[] {
  const spec = obj(ing.spec)
  const out: string[] = []
  const add = (b: unknown) => {
    const backend = obj(b)
    const name = str(obj(backend.service).name) || str(backend.serviceName)
    if (name && !out.includes(name)) out.push(name)
  }
  add(spec.defaultBackend)
  add(spec.backend)
  for (const rule of arr(spec.rules)) for (const p of arr(obj(obj(rule).http).paths)) add(obj(p).backend)
  return out
}

/** ingressHosts lists the hosts of an Ingress's rules. */
export function ingressHosts(ing: Obj): string[] {
  const out: string[] = []
  for (const rule of arr(obj(ing.spec).rules)) {
    const h = str(obj(rule).host)
    if (h && !out.includes(h)) out.push(h)
  }
  return out
}

/** podLabels are the labels of the Pods a workload makes (its Pod template's), or a Pod's own. */
export function podLabels(o: Obj, kind: string): Record<string, string> {
  if (kind === 'Pod') return stringMap(obj(o.metadata).labels)
  const spec = obj(o.spec)
  // A CronJob's Pods come from its Job template's Pod template.
  const template = kind === 'CronJob' ? obj(obj(obj(spec.jobTemplate).spec).template) : obj(spec.template)
  return stringMap(obj(template.metadata).labels)
}

/** selects says whether a Service selector selects Pods with labels; an empty selector selects none (Endpoints are then managed by hand). */
export function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  const keys = Object.keys(selector)
  return keys.length > 0 && keys.every((k) => labels[k] === selector[k])
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Pod'])

function key(r: { group: string; kind: string; namespace: string; name: string }): string {
  return `${r.group}/${r.kind}/${r.namespace}/${r.name}`
}

/** descendantPods lists the Pods under id in the tree (id itself when it is a Pod). */
function descendantPods(id: string, children: Map<string, TreeResource[]>, byId: Map<string, TreeResource>): TreeResource[] {
  const out: TreeResource[] = []
  const seen = new Set<string>()
  const stack = [id]
  while (stack.length > 0) {
    const cur = stack.pop()!
    if (seen.has(cur)) continue
    seen.add(cur)
    const r = byId.get(cur)
    if (r && isPod(r)) out.push(r)
    for (const c of children.get(cur) ?? []) stack.push(nodeId(c))
  }
  return out
}

/**
 * buildNetwork lays out the application's traffic: each Ingress with its
 * hosts and backend Services, and each Service with the workloads whose
 * Pod template its selector matches and those workloads' Pods (from the
 * tree). Only resources in the tree appear; objects is the live state of
 * the managed Ingresses, Services and workloads.
 */
export function buildNetwork(resources: readonly TreeResource[], objects: readonly LiveObject[]): NetworkView {
  const inTree = new Map(resources.filter((r) => !r.orphaned).map((r) => [key(r), r]))
  const byId = new Map(resources.map((r) => [nodeId(r), r]))
  const children = childrenOf(resources)
  const parsed = objects.map((o) => ({ o, m: parseLive(o.live) }))

  const services: NetService[] = []
  for (const { o, m } of parsed) {
    if (o.kind !== 'Service' || o.group !== '') continue
    const resource = inTree.get(key(o))
    if (!resource) continue
    const selector = stringMap(obj(m.spec).selector)
    const workloads: TreeResource[] = []
    const pods = new Map<string, TreeResource>()
    for (const w of parsed) {
      if (!WORKLOADS.has(w.o.kind) || w.o.namespace !== o.namespace) continue
      const wr = inTree.get(key(w.o))
      if (!wr || !selects(selector, podLabels(w.m, w.o.kind))) continue
      workloads.push(wr)
      for (const p of descendantPods(nodeId(wr), children, byId)) pods.set(nodeId(p), p)
    }
    services.push({ resource, workloads, pods: [...pods.values()].sort((a, b) => a.name.localeCompare(b.name)), exposed: false })
  }

  const ingresses: NetIngress[] = []
  for (const { o, m } of parsed) {
    if (o.kind !== 'Ingress') continue
    const resource = inTree.get(key(o))
    if (!resource) continue
    const backends = ingressBackends(m)
    for (const s of services) if (s.resource.namespace === o.namespace && backends.includes(s.resource.name)) s.exposed = true
    ingresses.push({ resource, hosts: ingressHosts(m), backends })
  }
  const byName = (a: { resource: TreeResource }, b: { resource: TreeResource }) => a.resource.name.localeCompare(b.resource.name)
  return { ingresses: ingresses.sort(byName), services: services.sort(byName) }
}
