// The resource tree's filters (kind, sync, health, orphaned) and their
// place in the URL, so a link shares what the tree shows; and the project's
// orphaned resources as tree entries. Pure functions, tested without a
// browser.
import { HEALTH_CODES, SYNC_CODES } from '../filters'
import type { HealthStatusCode, SyncStatusCode } from '../gql/graphql'
import type { TreeResource } from './tree'

/**
 * How orphaned resources show: not at all (the default), beside the
 * application's own, or alone.
 */
export type OrphanMode = 'hide' | 'show' | 'only'

/** TreeFilter is what the tree, the table and the Pods view show; the defaults show every resource and no orphan. */
export interface TreeFilter {
  kinds: string[]
  sync: SyncStatusCode[]
  health: HealthStatusCode[]
  orphans: OrphanMode
}

export const emptyTreeFilter: TreeFilter = { kinds: [], sync: [], health: [], orphans: 'hide' }

// The query keys; "view" and "resource" are the page's other state.
const KEYS = { kinds: 'kind', sync: 'sync', health: 'health', orphans: 'orphans' } as const

function values(p: URLSearchParams, key: string): string[] {
  const out: string[] = []
  for (const v of p.getAll(key)) {
    const t = v.trim()
    if (t !== '' && !out.includes(t)) out.push(t)
  }
  return out
}

function oneOf<T extends string>(allowed: readonly T[], vs: string[]): T[] {
  return vs.filter((v): v is T => (allowed as readonly string[]).includes(v))
}

/** parseTreeFilter reads the filter from a query string; unknown values are dropped. */
export function parseTreeFilter(search: string): TreeFilter {
  const p = new URLSearchParams(search)
  const o = p.get(KEYS.orphans)
  return {
    kinds: values(p, KEYS.kinds),
    sync: oneOf(SYNC_CODES, values(p, KEYS.sync)),
    health: oneOf(HEALTH_CODES, values(p, KEYS.health)),
    orphans: o === 'show' || o === 'only' ? o : 'hide',
  }
}

/**
 * withTreeFilter is search (a query string, with or without "?") with f's
 * keys replaced and every other key kept; it returns "" or "?...".
 */
export function withTreeFilter(search: string, f: TreeFilter): string {
  const p = new URLSearchParams(search)
  for (const k of Object.values(KEYS)) p.delete(k)
  for (const x of f.kinds) p.append(KEYS.kinds, x)
  for (const x of f.sync) p.append(KEYS.sync, x)
  for (const x of f.health) p.append(KEYS.health, x)
  if (f.orphans !== 'hide') p.set(KEYS.orphans, f.orphans)
  const s = p.toString()
  return s ? `?${s}` : ''
}

/** filterCount is how many filters are set (for "Filters (2)"). */
export function filterCount(f: TreeFilter): number {
  return f.kinds.length + f.sync.length + f.health.length + (f.orphans === 'hide' ? 0 : 1)
}

/** OrphanRef is how the API names an orphaned resource (ResourceTree.orphanedNodes). */
export interface OrphanRef {
  group: string
  kind: string
  namespace: string
  name: string
}

/**
 * orphanResources turns the tree's orphaned resources into tree entries:
 * top-level (no owner in the tree), without status, marked orphaned.
 * Entries without a kind or name (bad data) are left out.
 */
export function orphanResources(refs: readonly OrphanRef[] | null | undefined): TreeResource[] {
  const out: TreeResource[] = []
  for (const r of refs ?? []) {
    if (!r || !r.kind || !r.name) continue
    out.push({
      group: r.group ?? '',
      kind: r.kind,
      namespace: r.namespace ?? '',
      name: r.name,
      uid: '',
      parentRefs: [],
      health: null,
      sync: null,
      info: [],
      images: [],
      missing: false,
      orphaned: true,
    })
  }
  return out
}

/**
 * applyTreeFilter is what the tree shows of resources and orphans under f.
 * Kind, sync and health filters each keep a resource when any of their
 * values matches (none set: all); an orphan has no sync or health, so
 * either filter leaves orphans out.
 */
export function applyTreeFilter(resources: readonly TreeResource[], orphans: readonly TreeResource[], f: TreeFilter): TreeResource[] {
  const base = f.orphans === 'only' ? [...orphans] : f.orphans === 'show' ? [...resources, ...orphans] : [...resources]
  const kinds = new Set(f.kinds)
  const sync = new Set<string>(f.sync)
  const health = new Set<string>(f.health)
  return base.filter(
    (r) =>
      (kinds.size === 0 || kinds.has(r.kind)) &&
      (sync.size === 0 || (r.sync != null && sync.has(r.sync))) &&
      (health.size === 0 || (r.health != null && health.has(r.health.status))),
  )
}

/** kindCounts lists the kinds of resources (orphans included) with how many of each, by name. */
export function kindCounts(resources: readonly TreeResource[]): [string, number][] {
  const m = new Map<string, number>()
  for (const r of resources) m.set(r.kind, (m.get(r.kind) ?? 0) + 1)
  return [...m.entries()].sort((a, b) => a[0].localeCompare(b[0]))
}
