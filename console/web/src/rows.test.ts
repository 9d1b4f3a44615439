import { describe, expect, it } from 'vitest'
import { appendRows, applyEvent, makeRows, replaceRow, type AppEvent, type AppRow } from './rows'

function app(name: string, sync: AppRow['status']['sync']['status'] = 'Synced', health: AppRow['status']['health']['status'] = 'Healthy'): AppRow {
  return {
    id: name,
    name,
    namespace: 'graphcd',
    project: 'default',
    deleting: false,
    spec: { destination: { server: 'https://kubernetes.default.svc', name: '', namespace: 'web' }, source: null, sources: [], syncPolicy: null },
    status: { reconciledAt: null, sync: { status: sync, revision: 'abc' }, health: { status: health, message: '' }, operationState: null },
  }
}

function event(e: Partial<AppEvent>): AppEvent {
  return { lagged: false, type: 'HealthChanged', name: null, namespace: 'graphcd', syncStatus: null, health: null, operationPhase: null, message: null, application: null, ...e }
}

describe('applyEvent', () => {
  const rows = makeRows([app('a'), app('b'), app('c')])

  it('replaces the row with the application the event carries', () => {
    const got = applyEvent(rows, event({ name: 'b', application: app('b', 'OutOfSync', 'Degraded') }))
    expect(got.list.map((r) => [r.name, r.status.sync.status, r.status.health.status])).toEqual([
      ['a', 'Synced', 'Healthy'],
      ['b', 'OutOfSync', 'Degraded'],
      ['c', 'Synced', 'Healthy'],
    ])
    expect(rows.list[1]!.status.health.status).toBe('Healthy')
  })

  it('trusts the statuses of the event over a stale application snapshot', () => {
    const stale = app('b', 'OutOfSync', 'Missing')
    const got = applyEvent(rows, event({ type: 'OperationPhaseChanged', name: 'b', syncStatus: 'Synced', health: 'Healthy', operationPhase: 'Succeeded', message: 'done', application: stale }))
    expect(got.list[1]!.status).toMatchObject({ sync: { status: 'Synced' }, health: { status: 'Healthy' }, operationState: { phase: 'Succeeded', message: 'done' } })
  })

  it('patches the statuses when the event has no application', () => {
    const got = applyEvent(rows, event({ name: 'c', health: 'Progressing', syncStatus: 'bogus' }))
    expect(got.list[2]!.status).toMatchObject({ health: { status: 'Progressing' }, sync: { status: 'Synced' } })
  })

  it('ignores apps it has not loaded, and lagged markers', () => {
    expect(applyEvent(rows, event({ name: 'zzz', health: 'Degraded' }))).toBe(rows)
    expect(applyEvent(rows, event({ name: 'a', namespace: 'other', health: 'Degraded' }))).toBe(rows)
    expect(applyEvent(rows, event({ lagged: true, name: null }))).toBe(rows)
  })
})

describe('replaceRow', () => {
  it('replaces a loaded row and ignores others', () => {
    const rows = makeRows([app('a'), app('b')])
    expect(replaceRow(rows, app('b', 'OutOfSync')).list[1]!.status.sync.status).toBe('OutOfSync')
    expect(replaceRow(rows, app('zzz'))).toBe(rows)
  })
})

describe('appendRows', () => {
  it('adds a page and skips rows already loaded', () => {
    const got = appendRows(makeRows([app('a'), app('b')]), [app('b'), app('c')])
    expect(got.list.map((r) => r.name)).toEqual(['a', 'b', 'c'])
    expect(got.index.get('graphcd/c')).toBe(2)
  })
})
