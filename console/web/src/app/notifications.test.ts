import { describe, expect, it } from 'vitest'
import { bounded, firstPages, olderPage, outcomeBadge, outcomeHint, refreshSize, relativeTime, type Page } from './notifications'

describe('outcomeBadge', () => {
  it('gives each outcome its word and tone', () => {
    expect(outcomeBadge('SENT')).toMatchObject({ label: 'Sent', tone: 'ok' })
    expect(outcomeBadge('PENDING')).toMatchObject({ label: 'Pending', tone: 'busy' })
    expect(outcomeBadge('FAILED')).toMatchObject({ label: 'Failed', tone: 'warn' })
    expect(outcomeBadge('DEAD')).toMatchObject({ label: 'Dead letter', tone: 'bad' })
  })
  it('shows an outcome it does not know as itself, muted and bounded', () => {
    expect(outcomeBadge('LOST')).toMatchObject({ label: 'LOST', tone: 'muted' })
    expect(outcomeBadge('toString').tone).toBe('muted')
    expect(outcomeBadge('x'.repeat(100)).label).toHaveLength(20)
    expect(outcomeBadge('').label).toBe('Unknown')
  })
})

describe('outcomeHint', () => {
  it('says what comes next', () => {
    expect(outcomeHint('FAILED', 2)).toBe('attempt 2 failed; another is due')
    expect(outcomeHint('DEAD', 5)).toBe('gave up after 5 attempts')
    expect(outcomeHint('DEAD', 1)).toBe('gave up after 1 attempt')
    expect(outcomeHint('SENT', 1)).toBe('')
  })
})

describe('bounded', () => {
  it('keeps short text and cuts long text at a character, not a byte', () => {
    expect(bounded('abc', 3)).toBe('abc')
    expect(bounded('abcd', 3)).toBe('ab…')
    expect(bounded('😀😀😀😀', 3)).toBe('😀😀…')
  })
})

describe('relativeTime', () => {
  const now = Date.parse('2026-12-06T12:00:00Z')
  it('says how long ago', () => {
    expect(relativeTime('2026-12-06T11:59:30Z', now)).toBe('just now')
    expect(relativeTime('2026-12-06T11:55:00Z', now)).toBe('5 min ago')
    expect(relativeTime('2026-12-06T09:00:00Z', now)).toBe('3 h ago')
    expect(relativeTime('2026-12-04T12:00:00Z', now)).toBe('2 d ago')
  })
  it('takes a clock slightly ahead as now, and shows far times as dates', () => {
    expect(relativeTime('2026-12-06T12:00:30Z', now)).toBe('just now')
    expect(relativeTime('2026-12-06T13:00:00Z', now)).toBe(new Date('2026-12-06T13:00:00Z').toLocaleDateString())
    expect(relativeTime('2026-10-01T00:00:00Z', now)).toBe(new Date('2026-10-01T00:00:00Z').toLocaleDateString())
  })
  it('shows a time that does not parse as it is', () => {
    expect(relativeTime('yesterday', now)).toBe('yesterday')
  })
})

function page(cursors: string[], hasNextPage: boolean, totalCount = 10): Page<string> {
  return { edges: cursors.map((c) => ({ cursor: c, node: `delivery ${c}` })), pageInfo: { hasNextPage, endCursor: cursors.at(-1) ?? null }, totalCount }
}

describe('pages', () => {
  it('appends an older page after the loaded ones, once', () => {
    const p = firstPages(page(['a', 'b'], true))
    expect(p).toMatchObject({ endCursor: 'b', hasNextPage: true })
    const q = olderPage(p, 'b', page(['b', 'c', 'd'], false, 4))
    expect(q.edges.map((e) => e.cursor)).toEqual(['a', 'b', 'c', 'd'])
    expect(q).toMatchObject({ endCursor: 'd', hasNextPage: false, totalCount: 4 })
  })
  it('drops an older page that no longer follows what is shown', () => {
    const p = firstPages(page(['x', 'a', 'b'], true))
    expect(olderPage(p, 'a', page(['b', 'c'], false))).toBe(p)
  })
  it('keeps an empty page’s end where it was', () => {
    const p = firstPages(page(['a'], true))
    expect(olderPage(p, 'a', page([], false))).toMatchObject({ endCursor: 'a', hasNextPage: false })
  })
  it('refreshes as many as are shown, at least a page, at most the cap', () => {
    expect(refreshSize(null, 20, 500)).toBe(20)
    expect(refreshSize(firstPages(page(['a', 'b'], false)), 20, 500)).toBe(20)
    const many = firstPages(page(Array.from({ length: 45 }, (_, i) => String(i)), false))
    expect(refreshSize(many, 20, 500)).toBe(45)
    expect(refreshSize(many, 20, 30)).toBe(30)
  })
})
