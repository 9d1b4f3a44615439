import { describe, expect, it } from 'vitest'
import type { AuditEntryRowFragment } from '../gql/graphql'
import { emptyAuditView, formatAuditView, liveFilter, mergeLive, objectText, parseAuditView, patchLines, toAuditFilter, type AuditView } from './view'

function entry(id: string): AuditEntryRowFragment {
  return {
    id,
    time: '2026-12-04T10:00:00Z',
    user: 'alice',
    groups: [],
    clientAddress: '198.51.100.7',
    operationName: null,
    mutation: 'syncApplication',
    object: { kind: 'Application', group: 'graphcd.io', namespace: 'graphcd', name: 'web', project: 'shop' },
    patch: null,
    patchOmitted: false,
    outcome: 'SUCCESS',
    errorCode: null,
  }
}

describe('audit view <-> query string', () => {
  it('round-trips', () => {
    const v: AuditView = { user: 'alice', project: 'shop', kind: 'Application', name: 'web', outcome: 'FAILURE', since: '24h' }
    expect(parseAuditView('?' + formatAuditView(v))).toEqual(v)
    expect(formatAuditView(emptyAuditView)).toBe('')
  })
  it('drops unknown values', () => {
    expect(parseAuditView('?outcome=MAYBE&since=1y&user=' + 'x'.repeat(300))).toEqual({ ...emptyAuditView, user: 'x'.repeat(253) })
  })
})

describe('filters', () => {
  it('maps a view to the API filter, since as a window back from now', () => {
    const now = Date.parse('2026-12-04T12:00:00Z')
    const f = toAuditFilter({ ...emptyAuditView, user: 'bob', outcome: 'SUCCESS', since: '1h' }, now)
    expect(f).toEqual({ user: 'bob', outcome: 'SUCCESS', since: '2026-12-04T11:00:00.000Z' })
    expect(liveFilter(f)).toEqual({ user: 'bob', outcome: 'SUCCESS' })
  })
})

describe('live entries', () => {
  it('come first, once, and the list stays bounded', () => {
    let list = [entry('2'), entry('1')]
    list = mergeLive(list, entry('3'))
    expect(list.map((e) => e.id)).toEqual(['3', '2', '1'])
    expect(mergeLive(list, entry('3'))).toBe(list)
    expect(mergeLive(list, entry('4'), 2).map((e) => e.id)).toEqual(['4', '3'])
  })
})

describe('display', () => {
  it('names objects', () => {
    expect(objectText(entry('1').object)).toBe('Application graphcd/web')
    expect(objectText({ kind: '', group: '', namespace: '', name: '', project: '' })).toBe('—')
  })
  it('shows a patch one operation a line', () => {
    const patch = '[{"op":"replace","path":"/data/password","value":"<redacted>"},{"op":"remove","path":""}]'
    expect(patchLines(patch)).toEqual(['replace /data/password "<redacted>"', 'remove /'])
    expect(patchLines('not json')).toEqual(['not json'])
    expect(patchLines(null)).toEqual([])
  })
})
