// The audit page's state: its filters live in the query string, so a link
// shares them; live entries merge into the list newest first.
import type { AuditEntryRowFragment, AuditFilter, AuditOutcome } from '../gql/graphql'

/** AuditView is what the audit page filters by. */
export interface AuditView {
  user: string
  project: string
  kind: string
  name: string
  outcome: AuditOutcome | ''
  /** since is a window back from now: '', '1h', '24h' or '7d'. */
  since: '' | '1h' | '24h' | '7d'
}

export const emptyAuditView: AuditView = { user: '', project: '', kind: '', name: '', outcome: '', since: '' }

const SINCE: Record<AuditView['since'], number> = { '': 0, '1h': 3600e3, '24h': 86400e3, '7d': 7 * 86400e3 }

/** parseAuditView reads a view from a query string; unknown values are left out. */
export function parseAuditView(search: string): AuditView {
  const q = new URLSearchParams(search)
  const text = (k: string) => (q.get(k) ?? '').trim().slice(0, 253)
  const outcome = q.get('outcome')
  const since = q.get('since') ?? ''
  return {
    user: text('user'),
    project: text('project'),
    kind: text('kind'),
    name: text('name'),
    outcome: outcome === 'SUCCESS' || outcome === 'FAILURE' ? outcome : '',
    since: since in SINCE ? (since as AuditView['since']) : '',
  }
}

/** formatAuditView writes a view as a query string, without its empty fields. */
export function formatAuditView(v: AuditView): string {
  const q = new URLSearchParams()
  for (const k of ['user', 'project', 'kind', 'name', 'outcome', 'since'] as const) {
    if (v[k]) q.set(k, v[k])
  }
  return q.toString()
}

/** toAuditFilter is the API's filter of a view at time now. */
export function toAuditFilter(v: AuditView, now: number): AuditFilter {
  const f: AuditFilter = {}
  if (v.user) f.user = v.user
  if (v.project) f.project = v.project
  if (v.kind) f.kind = v.kind
  if (v.name) f.name = v.name
  if (v.outcome) f.outcome = v.outcome
  if (v.since) f.since = new Date(now - SINCE[v.since]).toISOString()
  return f
}

/** liveFilter is the filter of live entries: a window back from now only matters to the list. */
export function liveFilter(f: AuditFilter): AuditFilter {
  const { since: _since, ...rest } = f
  return rest
}

/** MAX_LIVE bounds the entries a page keeps from its live updates. */
export const MAX_LIVE = 500

/** mergeLive puts a new entry in front of the list, once, keeping at most max entries. */
export function mergeLive(list: AuditEntryRowFragment[], e: AuditEntryRowFragment, max = MAX_LIVE): AuditEntryRowFragment[] {
  if (list.some((x) => x.id === e.id)) return list
  return [e, ...list].slice(0, max)
}

/** objectText names an entry's object: "Kind namespace/name". */
export function objectText(o: AuditEntryRowFragment['object']): string {
  const name = o.namespace ? `${o.namespace}/${o.name}` : o.name
  return [o.kind, name].filter(Boolean).join(' ') || '—'
}

/** patchLines shows a JSON patch one operation a line; text that is not a patch is shown as it is. */
export function patchLines(patch: string | null | undefined): string[] {
  if (!patch) return []
  try {
    const ops: unknown = JSON.parse(patch)
    if (!Array.isArray(ops)) return [patch]
    return ops.map((op) => {
      const o = op as { op?: unknown; path?: unknown; value?: unknown }
      const value = o.value === undefined ? '' : ' ' + JSON.stringify(o.value)
      return `${String(o.op)} ${o.path === '' ? '/' : String(o.path)}${value}`
    })
  } catch {
    return [patch]
  }
}
