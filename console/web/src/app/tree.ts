// The resource tree as the graph view shows it: which nodes and edges, in
// what order, with Pods of one owner grouped, collapsed subtrees left out
// and a cap on how many nodes are laid out, so an application with
// thousands of resources stays responsive. Pure functions, tested without
// a browser.
import { formatResource } from './resourceParam'

/** TreeResource is the part of a ResourceNode the page uses. */
export interface TreeResource {
  group: string
  kind: string
  namespace: string
  name: string
  uid: string
  parentRefs: readonly { uid: string }[]
  health?: { status: string; message: string } | null
  sync?: string | null
  info: readonly { name: string; value: string }[]
  images: readonly string[]
  /** Git declares it and the cluster does not have it: a sync creates it. */
  missing: boolean
  /** No application tracks it, and the project reports it (ResourceTree.orphanedNodes). */
  orphaned?: boolean
}

/**
 * nodeId identifies a resource in the graph and the table: its uid, or for
 * an object without one (a resource Git declares that the cluster does not
 * have) its group/kind/namespace/name, as Argo CD's UI keys its nodes. A
 * uid never holds a slash, so the two kinds of id cannot meet.
 */
export function nodeId(r: Pick<TreeResource, 'group' | 'kind' | 'namespace' | 'name' | 'uid'>): string {
  return r.uid || formatResource(r)
}

/** APP_ID is the id of the application's own node, the root of the graph. */
export const APP_ID = 'app'

export type ViewNode =
  | { type: 'app'; id: string; hasChildren: boolean; collapsed: boolean }
  | { type: 'resource'; id: string; resource: TreeResource; hasChildren: boolean; collapsed: boolean }
  | { type: 'group'; id: string; kind: string; members: TreeResource[]; health: string | null }

export interface ViewEdge {
  id: string
  source: string
  target: string
}

export interface TreeView {
  nodes: ViewNode[]
  edges: ViewEdge[]
  /** How many nodes the view would have without the cap. */
  total: number
}

export interface ViewOptions {
  /** Ids (uids, or APP_ID) whose children are hidden. */
  collapsed: ReadonlySet<string>
  /** Ids of group nodes shown as their members. */
  expanded: ReadonlySet<string>
  /** At most this many nodes, taken breadth first from the application. */
  limit: number
  /** A parent with at least this many Pods shows them as one group node. */
  groupMin?: number
}

/** DEFAULT_GROUP_MIN Pods of one owner or more become one group node. */
export const DEFAULT_GROUP_MIN = 4

/** groupId names the group of kind's children of parent. */
export function groupId(parent: string, kind: string): string {
  return `group:${parent}:${kind}`
}

function compareResources(a: TreeResource, b: TreeResource): number {
  return a.kind.localeCompare(b.kind) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name)
}

/** childrenOf maps each node id (APP_ID for the top) to its children, sorted by kind, namespace and name. */
export function childrenOf(resources: readonly TreeResource[]): Map<string, TreeResource[]> {
  const present = new Set(resources.map(nodeId))
  const out = new Map<string, TreeResource[]>()
  const add = (parent: string, r: TreeResource) => {
    const list = out.get(parent)
    if (list) list.push(r)
    else out.set(parent, [r])
  }
  for (const r of resources) {
    // An owner outside the tree (or none) makes the object a top resource.
    const id = nodeId(r)
    const parents = [...new Set(r.parentRefs.map((p) => p.uid))].filter((u) => present.has(u) && u !== id)
    if (parents.length === 0) add(APP_ID, r)
    for (const p of parents) add(p, r)
  }
  for (const list of out.values()) list.sort(compareResources)
  return out
}

// Argo CD's order of concern: a group shows its worst member's health.
const healthOrder = ['Healthy', 'Suspended', 'Progressing', 'Missing', 'Degraded', 'Unknown']

/** worstHealth is the most concerning health of the resources, or null when none has one. */
export function worstHealth(resources: readonly TreeResource[]): string | null {
  let worst: string | null = null
  for (const r of resources) {
    const h = r.health?.status
    if (!h) continue
    if (worst === null || healthOrder.indexOf(h) > healthOrder.indexOf(worst)) worst = h
  }
  return worst
}

/**
 * buildView lays out which nodes and edges the graph shows: breadth first
 * from the application, each object once (an object with two owners gets
 * an edge from each shown owner), children of collapsed nodes left out,
 * and groupMin or more Pods of one owner shown as a group node unless
 * that group is expanded. Nodes past limit are left out; total says how
 * many there would be.
 */
export function buildView(resources: readonly TreeResource[], opts: ViewOptions): TreeView {
  const children = childrenOf(resources)
  const groupMin = opts.groupMin ?? DEFAULT_GROUP_MIN
  const nodes: ViewNode[] = []
  const shown = new Set<string>()
  const seen = new Set<string>([APP_ID])
  let total = 1
  const queue: string[] = [APP_ID]
  nodes.push({ type: 'app', id: APP_ID, hasChildren: (children.get(APP_ID)?.length ?? 0) > 0, collapsed: opts.collapsed.has(APP_ID) })
  shown.add(APP_ID)
  const groupParent = new Map<string, string>()

  const take = (n: ViewNode) => {
    total++
    if (nodes.length < opts.limit) {
      nodes.push(n)
      shown.add(n.id)
    }
  }

  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!
    if (opts.collapsed.has(id)) continue
    const kids = (children.get(id) ?? []).filter((r) => !seen.has(nodeId(r)))
    const pods = kids.filter((r) => r.kind === 'Pod' && r.group === '')
    const gid = groupId(id, 'Pod')
    const grouped = pods.length >= groupMin && !opts.expanded.has(gid)
    if (grouped) {
      for (const p of pods) seen.add(nodeId(p))
      groupParent.set(gid, id)
      take({ type: 'group', id: gid, kind: 'Pod', members: pods, health: worstHealth(pods) })
    }
    for (const r of kids) {
      if (grouped && r.kind === 'Pod' && r.group === '') continue
      const rid = nodeId(r)
      seen.add(rid)
      const hasChildren = (children.get(rid)?.length ?? 0) > 0
      take({ type: 'resource', id: rid, resource: r, hasChildren, collapsed: opts.collapsed.has(rid) })
      queue.push(rid)
    }
  }

  const present = new Set(resources.map(nodeId))
  const edges: ViewEdge[] = []
  for (const n of nodes) {
    if (n.type === 'app') continue
    let parents: string[]
    if (n.type === 'group') parents = [groupParent.get(n.id) ?? APP_ID]
    else {
      const owners = [...new Set(n.resource.parentRefs.map((p) => p.uid))].filter((u) => present.has(u) && u !== n.id)
      parents = owners.length === 0 ? [APP_ID] : owners.filter((u) => shown.has(u))
    }
    for (const p of parents) edges.push({ id: `${p}->${n.id}`, source: p, target: n.id })
  }
  return { nodes, edges, total }
}

/** Status is what the graph highlights a change of. */
function status(r: TreeResource): string {
  return `${r.health?.status ?? ''}|${r.sync ?? ''}`
}

/**
 * changedIds returns the ids (nodeId) of resources whose health or sync
 * status differs between two versions of the tree (new and gone resources
 * are not changes of status). With no previous tree nothing changed.
 */
export function changedIds(prev: readonly TreeResource[] | null, next: readonly TreeResource[]): Set<string> {
  const out = new Set<string>()
  if (!prev) return out
  const before = new Map(prev.map((r) => [nodeId(r), status(r)]))
  for (const r of next) {
    const id = nodeId(r)
    const s = before.get(id)
    if (s !== undefined && s !== status(r)) out.add(id)
  }
  return out
}

/** nodeChanged says whether a view node shows a changed resource (a group: any member). */
export function nodeChanged(n: ViewNode, changed: ReadonlySet<string>): boolean {
  if (n.type === 'resource') return changed.has(n.id)
  if (n.type === 'group') return n.members.some((m) => changed.has(nodeId(m)))
  return false
}

/**
 * treeSummary is the line above the graph and the table: how many
 * resources the tree has and how many of them a sync would create.
 */
export function treeSummary(resources: readonly TreeResource[], truncated: boolean): string {
  const n = resources.length
  let missing = 0
  for (const r of resources) if (r.missing) missing++
  let s = `${n.toLocaleString()} ${n === 1 ? 'resource' : 'resources'}`
  if (missing > 0) s += `, ${missing === n ? (n === 1 ? 'missing' : 'all missing') : `${missing.toLocaleString()} missing`}: a sync creates ${missing === 1 ? 'it' : 'them'}`
  if (truncated) s += ' (the tree was cut to stay under the size limit)'
  return s
}

/** tableRows lists every resource sorted by kind, namespace and name. */
export function tableRows(resources: readonly TreeResource[]): TreeResource[] {
  return [...resources].sort(compareResources)
}

/** kindAbbrev is the short label of a kind, as kubectl's short names (deploy, rs, po ...). */
export function kindAbbrev(kind: string): string {
  const short: Record<string, string> = {
    Deployment: 'deploy',
    ReplicaSet: 'rs',
    Pod: 'pod',
    Service: 'svc',
    ConfigMap: 'cm',
    Secret: 'secret',
    StatefulSet: 'sts',
    DaemonSet: 'ds',
    Job: 'job',
    CronJob: 'cj',
    Ingress: 'ing',
    PersistentVolumeClaim: 'pvc',
    ServiceAccount: 'sa',
    Namespace: 'ns',
    EndpointSlice: 'eps',
    Endpoints: 'ep',
    HorizontalPodAutoscaler: 'hpa',
    Role: 'role',
    RoleBinding: 'rb',
    ClusterRole: 'crole',
    ClusterRoleBinding: 'crb',
  }
  return short[kind] ?? (kind.replace(/[^A-Z]/g, '').toLowerCase().slice(0, 4) || kind.slice(0, 4).toLowerCase())
}
