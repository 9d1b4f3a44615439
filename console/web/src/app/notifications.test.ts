import { describe, expect, it } from 'vitest'
import {
  bounded,
  declaredIn,
  firstPages,
  latest,
  liveDelivery,
  olderPage,
  outcomeBadge,
  outcomeHint,
  parseRecipients,
  refreshSize,
  relativeTime,
  removable,
  subscribeProblems,
  triggerChoices,
  unsubscribeInput,
  type Page,
  type Subscribed,
} from './notifications'

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

interface D {
  key: string
  time: string
  outcome?: string
}

// d is a delivery recorded minute minutes after noon.
function d(key: string, minute: number, outcome = 'SENT'): D {
  return { key, time: new Date(Date.UTC(2026, 11, 6, 12, minute)).toISOString(), outcome }
}

function page(nodes: D[], hasNextPage: boolean, totalCount = 10): Page<D> {
  return { nodes, pageInfo: { hasNextPage, endCursor: nodes.length ? `after-${nodes.at(-1)?.key}` : null }, totalCount }
}

const keys = (p: { nodes: D[] }) => p.nodes.map((x) => x.key)

describe('pages', () => {
  it('appends an older page after the loaded ones, once', () => {
    const p = firstPages(page([d('a', 9), d('b', 8)], true))
    expect(p).toMatchObject({ endCursor: 'after-b', hasNextPage: true })
    const q = olderPage(p, 'after-b', page([d('b', 8), d('c', 7), d('d', 6)], false, 4))
    expect(keys(q)).toEqual(['a', 'b', 'c', 'd'])
    expect(q).toMatchObject({ endCursor: 'after-d', hasNextPage: false, totalCount: 4 })
  })
  it('drops an older page that no longer follows what is shown', () => {
    const p = firstPages(page([d('x', 9), d('a', 8), d('b', 7)], true))
    expect(olderPage(p, 'after-a', page([d('c', 6)], false))).toBe(p)
  })
  it('keeps an empty page’s end where it was', () => {
    const p = firstPages(page([d('a', 1)], true))
    expect(olderPage(p, 'after-a', page([], false))).toMatchObject({ endCursor: 'after-a', hasNextPage: false })
  })
  it('refreshes as many as are shown, at least a page, at most the cap', () => {
    expect(refreshSize(null, 20, 500)).toBe(20)
    expect(refreshSize(firstPages(page([d('a', 1)], false)), 20, 500)).toBe(20)
    const many = firstPages(page(Array.from({ length: 45 }, (_, i) => d(String(i), 50 - i)), false))
    expect(refreshSize(many, 20, 500)).toBe(45)
    expect(refreshSize(many, 20, 30)).toBe(30)
  })
})

describe('liveDelivery', () => {
  const p = firstPages(page([d('b', 8, 'FAILED'), d('a', 5)], false, 2))
  it('puts a new delivery in its place by time and counts it', () => {
    const q = liveDelivery(p, d('c', 9, 'PENDING'))
    expect(keys(q)).toEqual(['c', 'b', 'a'])
    expect(q.totalCount).toBe(3)
  })
  it('replaces the record of the same key, which moves up with its new time', () => {
    const q = liveDelivery(p, d('a', 10, 'FAILED'))
    expect(q.nodes).toEqual([d('a', 10, 'FAILED'), d('b', 8, 'FAILED')])
    expect(q.totalCount).toBe(2)
  })
  it('keeps a newer record than the one that arrives', () => {
    expect(liveDelivery(p, d('b', 7, 'PENDING'))).toBe(p)
  })
  it('merges what arrived while the first page was asked for without counting it twice', () => {
    const q = firstPages(page([d('b', 8), d('a', 5)], false, 3), [d('c', 9), d('b', 7, 'PENDING')])
    expect(keys(q)).toEqual(['c', 'b', 'a'])
    expect(q.nodes[1]?.outcome).toBe('SENT')
    expect(q.totalCount).toBe(3)
  })
})

describe('subscribing', () => {
  it('offers the catalog’s triggers and those subscribed to, once, sorted', () => {
    const t = triggerChoices(['on-sync-failed', 'my.custom', 'bad name'])
    expect(t).toContain('on-created')
    expect(t).toContain('my.custom')
    expect(t).not.toContain('bad name')
    expect(t.filter((x) => x === 'on-sync-failed')).toHaveLength(1)
    expect(t).toEqual([...t].sort())
  })
  it('reads recipients separated by ";", "," or lines, trimmed, each once', () => {
    expect(parseRecipients(' deploys; oncall,\nops\r\n;deploys ;; ')).toEqual(['deploys', 'oncall', 'ops'])
    expect(parseRecipients('  ')).toEqual([])
  })
  it('refuses what the server would', () => {
    expect(subscribeProblems({ trigger: 'on-sync-failed', service: 'slack', recipients: ['deploys'] })).toEqual([])
    expect(subscribeProblems({ trigger: null, service: 'deploy-log', recipients: [] })).toEqual([])
    expect(subscribeProblems({ trigger: 'a.b', service: 'slack', recipients: [] })).toEqual([])
    expect(subscribeProblems({ trigger: '', service: 'slack', recipients: [] })).toEqual(['Name the trigger.'])
    expect(subscribeProblems({ trigger: 'on sync', service: 'slack', recipients: [] })[0]).toMatch(/trigger "on sync"/)
    expect(subscribeProblems({ trigger: null, service: '', recipients: [] })[0]).toMatch(/^Name the service/)
    expect(subscribeProblems({ trigger: null, service: 'web.hook', recipients: [] })[0]).toMatch(/service "web.hook"/)
    expect(subscribeProblems({ trigger: null, service: 's', recipients: Array.from({ length: 51 }, (_, i) => `r${i}`) })).toEqual(['At most 50 recipients at a time.'])
    expect(subscribeProblems({ trigger: null, service: 's', recipients: ['é'.repeat(129)] })[0]).toMatch(/longer than 256 bytes/)
    expect(subscribeProblems({ trigger: null, service: 's', recipients: ['a\tb'] })[0]).toMatch(/control character/)
  })
})

describe('subscription rows', () => {
  const own: Subscribed = {
    trigger: 'on-sync-failed',
    service: 'slack',
    recipients: ['deploys', 'oncall'],
    source: 'APPLICATION',
    annotation: 'notifications.argoproj.io/subscribe.on-sync-failed.slack',
    defaultTriggers: false,
  }
  it('removes the application’s own subscribe annotations only', () => {
    expect(removable(own)).toBe(true)
    expect(removable({ ...own, annotation: 'notifications.argoproj.io/subscriptions' })).toBe(false)
    expect(removable({ ...own, source: 'PROJECT' })).toBe(false)
    expect(removable({ ...own, source: 'DEFAULT', annotation: '' })).toBe(false)
  })
  it('says where a read-only row comes from', () => {
    expect(declaredIn({ ...own, source: 'PROJECT' }, 'shop')).toBe(`project shop's annotation ${own.annotation}: change it on the project`)
    expect(declaredIn({ ...own, source: 'DEFAULT', annotation: '' }, 'shop')).toMatch(/notifications ConfigMap/)
    expect(declaredIn({ ...own, annotation: 'notifications.graphcd.io/subscriptions' }, 'shop')).toMatch(/edit that list/)
  })
  it('unsubscribes a row’s recipients, the default triggers’ annotation, or a webhook’s whole annotation', () => {
    const app = { name: 'shop', namespace: 'cd' }
    expect(unsubscribeInput(app, own)).toEqual({ application: app, trigger: 'on-sync-failed', service: 'slack', recipients: ['deploys', 'oncall'] })
    expect(unsubscribeInput(app, { ...own, defaultTriggers: true }).trigger).toBeNull()
    expect(unsubscribeInput(app, { ...own, service: 'deploy-log', recipients: [] }).recipients).toBeNull()
  })
})

describe('latest', () => {
  it('is the newer read by resourceVersion, the first when they are equal or not numbers', () => {
    const a = { resourceVersion: '100', from: 'query' }
    const b = { resourceVersion: '99', from: 'mutation' }
    expect(latest(a, b)).toBe(a)
    expect(latest(a, { ...b, resourceVersion: '1000' })?.from).toBe('mutation')
    expect(latest(a, { ...b, resourceVersion: '100' })).toBe(a)
    expect(latest(a, { ...b, resourceVersion: 'x' })).toBe(a)
    expect(latest(null, b)).toBe(b)
    expect(latest(undefined, null)).toBeNull()
  })
})
