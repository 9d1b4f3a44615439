// The Pods view: the application's Pods grouped by the node they run on or
// by the workload that made them (a ReplicaSet, StatefulSet, DaemonSet,
// Job ...), as Argo CD's Pods view does. Pure functions over the tree.
import { nodeId, worstHealth, type TreeResource } from './tree'

export type PodGrouping = 'node' | 'parent'

export interface PodGroup {
  /** Stable key of the group: "node:NAME", "parent:ID" or "none". */
  key: string
  /** What the group is: a node's name, or "ReplicaSet web-7d9f". */
  label: string
  /** The owner's kind when grouped by parent. */
  kind: string | null
  pods: TreeResource[]
  /** The worst health of its Pods, or null when none has one. */
  health: string | null
}

/** isPod says whether a tree entry is a core Pod. */
export function isPod(r: TreeResource): boolean {
  return r.kind === 'Pod' && r.group === ''
}

/** infoValue is the value of a fact of the tree (e.g. "Node"), or "" when absent. */
export function infoValue(r: TreeResource, name: string): string {
  for (const f of r.info ?? []) if (f && f.name === name) return typeof f.value === 'string' ? f.value : ''
  return ''
}

const UNSCHEDULED = 'none'

/**
 * groupPods groups the Pods of resources by node or by owner. Pods on no
 * node yet, or without an owner in the tree, share one last group; groups
 * are sorted by label, Pods by name.
 */
export function groupPods(resources: readonly TreeResource[], by: PodGrouping): PodGroup[] {
  const byId = new Map(resources.map((r) => [nodeId(r), r]))
  const groups = new Map<string, PodGroup>()
  for (const p of resources) {
    if (!isPod(p)) continue
    let key = UNSCHEDULED
    let label = by === 'node' ? 'Not scheduled on a node' : 'Without an owner in the application'
    let kind: string | null = null
    if (by === 'node') {
      const node = infoValue(p, 'Node')
      if (node) {
        key = `node:${node}`
        label = node
      }
    } else {
      const owner = (p.parentRefs ?? []).map((ref) => byId.get(ref.uid)).find((o) => o !== undefined)
      if (owner) {
        key = `parent:${nodeId(owner)}`
        label = `${owner.kind} ${owner.name}`
        kind = owner.kind
      }
    }
    const g = groups.get(key)
    if (g) g.pods.push(p)
    else groups.set(key, { key, label, kind, pods: [p], health: null })
  }
  const out = [...groups.values()]
  for (const g of out) {
    g.pods.sort((a, b) => a.name.localeCompare(b.name) || a.namespace.localeCompare(b.namespace))
    g.health = worstHealth(g.pods)
  }
  out.sort((a, b) => (a.key === UNSCHEDULED ? 1 : 0) - (b.key === UNSCHEDULED ? 1 : 0) || a.label.localeCompare(b.label))
  return out
}
