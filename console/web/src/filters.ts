// The applications list's view (filters, order, layout) and its two
// encodings: the URL query string, so a link shares the view, and the
// server's ApplicationFilter / ApplicationOrder.
import type {
  ApplicationFilter,
  ApplicationOrder,
  HealthStatusCode,
  SyncStatusCode,
} from './gql/graphql'

export const SYNC_CODES = ['Synced', 'OutOfSync', 'Unknown'] as const satisfies readonly SyncStatusCode[]
export const HEALTH_CODES = [
  'Healthy',
  'Progressing',
  'Degraded',
  'Suspended',
  'Missing',
  'Unknown',
] as const satisfies readonly HealthStatusCode[]

export const SORTS = ['name', '-name', 'sync', 'health', '-lastDeployed', 'lastDeployed'] as const
export type Sort = (typeof SORTS)[number]
export type Layout = 'table' | 'tiles'

/** What the applications list shows; the defaults are the empty view. */
export interface ListView {
  projects: string[]
  sync: SyncStatusCode[]
  health: HealthStatusCode[]
  namespaces: string[]
  search: string
  autoSync: boolean | null
  sort: Sort
  layout: Layout
}

export const emptyView: ListView = {
  projects: [],
  sync: [],
  health: [],
  namespaces: [],
  search: '',
  autoSync: null,
  sort: 'name',
  layout: 'table',
}

function values(params: URLSearchParams, key: string): string[] {
  const out: string[] = []
  for (const v of params.getAll(key)) {
    const t = v.trim()
    if (t !== '' && !out.includes(t)) out.push(t)
  }
  return out
}

function oneOf<T extends string>(allowed: readonly T[], vs: string[]): T[] {
  return vs.filter((v): v is T => (allowed as readonly string[]).includes(v))
}

/** parseView reads a view from a query string; unknown values are dropped. */
export function parseView(search: string): ListView {
  const p = new URLSearchParams(search)
  const auto = p.get('auto')
  const sort = p.get('sort')
  return {
    projects: values(p, 'project'),
    sync: oneOf(SYNC_CODES, values(p, 'sync')),
    health: oneOf(HEALTH_CODES, values(p, 'health')),
    namespaces: values(p, 'namespace'),
    search: (p.get('q') ?? '').trim(),
    autoSync: auto === 'true' ? true : auto === 'false' ? false : null,
    sort: (SORTS as readonly string[]).includes(sort ?? '') ? (sort as Sort) : 'name',
    layout: p.get('view') === 'tiles' ? 'tiles' : 'table',
  }
}

/** formatView writes a view as a query string (without "?"), leaving out defaults. */
export function formatView(v: ListView): string {
  const p = new URLSearchParams()
  for (const x of v.projects) p.append('project', x)
  for (const x of v.sync) p.append('sync', x)
  for (const x of v.health) p.append('health', x)
  for (const x of v.namespaces) p.append('namespace', x)
  if (v.search.trim() !== '') p.set('q', v.search.trim())
  if (v.autoSync !== null) p.set('auto', String(v.autoSync))
  if (v.sort !== 'name') p.set('sort', v.sort)
  if (v.layout !== 'table') p.set('view', v.layout)
  return p.toString()
}

/** toFilter is the server-side filter of a view; fields left empty are omitted. */
export function toFilter(v: ListView): ApplicationFilter {
  const f: ApplicationFilter = {}
  if (v.projects.length > 0) f.projects = v.projects
  if (v.sync.length > 0) f.syncStatus = v.sync
  if (v.health.length > 0) f.health = v.health
  if (v.namespaces.length > 0) f.destinationNamespaces = v.namespaces
  if (v.search.trim() !== '') f.search = v.search.trim()
  if (v.autoSync !== null) f.autoSync = v.autoSync
  return f
}

/** toOrder is the server-side order of a view. */
export function toOrder(s: Sort): ApplicationOrder {
  const desc = s.startsWith('-')
  const key = desc ? s.slice(1) : s
  const field = key === 'sync' ? 'SYNC' : key === 'health' ? 'HEALTH' : key === 'lastDeployed' ? 'LAST_DEPLOYED' : 'NAME'
  return { field, direction: desc ? 'DESC' : 'ASC' }
}
