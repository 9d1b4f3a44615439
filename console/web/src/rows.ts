// The loaded rows of the applications list and how a live event patches
// them in place.
import type { AppRowFragment, ApplicationEventsSubscription, HealthStatusCode, OperationPhase, SyncStatusCode } from './gql/graphql'
import { HEALTH_CODES, SYNC_CODES } from './filters'

export type AppRow = AppRowFragment
export type AppEvent = ApplicationEventsSubscription['applicationEvents']

export function rowKey(r: { namespace: string; name: string }): string {
  return `${r.namespace}/${r.name}`
}

/** Rows keeps the loaded applications in list order with an index by namespace/name. */
export interface Rows {
  list: AppRow[]
  index: Map<string, number>
}

export function makeRows(list: AppRow[]): Rows {
  const index = new Map<string, number>()
  list.forEach((r, i) => index.set(rowKey(r), i))
  return { list, index }
}

/** appendRows adds a page after the loaded ones, skipping any already there. */
export function appendRows(rows: Rows, page: AppRow[]): Rows {
  return makeRows([...rows.list, ...page.filter((r) => !rows.index.has(rowKey(r)))])
}

/**
 * applyEvent returns rows with the event's application patched in place, or
 * the same rows when the event is about an application not loaded (its
 * position in the server's order is unknown; the next fetch shows it).
 * The statuses the event carries win over its application snapshot, which
 * the API reads when it sends the event and may not show the change yet.
 * Lagged events are the caller's to handle (refetch).
 */
export function applyEvent(rows: Rows, ev: AppEvent): Rows {
  if (ev.lagged || !ev.name || !ev.namespace) return rows
  const i = rows.index.get(`${ev.namespace}/${ev.name}`)
  if (i === undefined) return rows
  const list = rows.list.slice()
  list[i] = patchStatus(ev.application ?? rows.list[i]!, ev)
  return { list, index: rows.index }
}

/** replaceRow puts a freshly fetched application in place of its row, if loaded. */
export function replaceRow(rows: Rows, app: AppRow): Rows {
  const i = rows.index.get(rowKey(app))
  if (i === undefined) return rows
  const list = rows.list.slice()
  list[i] = app
  return { list, index: rows.index }
}

// patchStatus applies the statuses an event carries.
function patchStatus(r: AppRow, ev: AppEvent): AppRow {
  const sync = (SYNC_CODES as readonly string[]).includes(ev.syncStatus ?? '')
    ? (ev.syncStatus as SyncStatusCode)
    : r.status.sync.status
  const health = (HEALTH_CODES as readonly string[]).includes(ev.health ?? '')
    ? (ev.health as HealthStatusCode)
    : r.status.health.status
  const phase = (OPERATION_PHASES as readonly string[]).includes(ev.operationPhase ?? '')
    ? (ev.operationPhase as OperationPhase)
    : null
  return {
    ...r,
    status: {
      ...r.status,
      sync: { ...r.status.sync, status: sync },
      health: { ...r.status.health, status: health },
      operationState: phase ? { phase, message: ev.message ?? '' } : r.status.operationState,
    },
  }
}

const OPERATION_PHASES = ['Running', 'Terminating', 'Failed', 'Error', 'Succeeded'] as const satisfies readonly OperationPhase[]
