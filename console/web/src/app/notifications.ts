// How the Notifications view reads an application's deliveries (outcome
// badges, bounded text, relative times, the pages of the list as "Older
// deliveries" and live updates change them) and its subscriptions (what
// the subscribe form accepts, which rows it can remove). Tested without a
// browser.
import type { Badge } from '../ui/badges'

const outcomes: Record<string, Badge> = {
  PENDING: { label: 'Pending', tone: 'busy', symbol: '◌' },
  SENT: { label: 'Sent', tone: 'ok', symbol: '✓' },
  FAILED: { label: 'Failed', tone: 'warn', symbol: '↻' },
  DEAD: { label: 'Dead letter', tone: 'bad', symbol: '✕' },
}

/** outcomeBadge shows a delivery's outcome; one this console does not know shows as itself, muted. */
export function outcomeBadge(outcome: string): Badge {
  return (Object.hasOwn(outcomes, outcome) ? outcomes[outcome] : undefined) ?? { label: bounded(outcome, 20) || 'Unknown', tone: 'muted', symbol: '?' }
}

/** outcomeHint says what an outcome means for what happens next. */
export function outcomeHint(outcome: string, attempts: number): string {
  switch (outcome) {
    case 'PENDING':
      return 'being sent'
    case 'FAILED':
      return `attempt ${attempts} failed; another is due`
    case 'DEAD':
      return `gave up after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`
    default:
      return ''
  }
}

/** bounded cuts s to at most n characters (code points), marking the cut with "…". */
export function bounded(s: string, n: number): string {
  const chars = Array.from(s)
  return chars.length <= n ? s : `${chars.slice(0, n - 1).join('')}…`
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/**
 * relativeTime says how long before now (ms since the epoch) t was: "just
 * now", "5 min ago", "3 h ago", "2 d ago"; a month or more back, and
 * anything later than a minute from now (a clock ahead of this one), as
 * the date. A time that does not parse reads as it is.
 */
export function relativeTime(t: string, now: number): string {
  const at = Date.parse(t)
  if (Number.isNaN(at)) return bounded(t, 40)
  const ago = now - at
  if (ago < -MINUTE || ago >= 30 * DAY) return new Date(at).toLocaleDateString()
  if (ago < MINUTE) return 'just now'
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`
  if (ago < DAY) return `${Math.floor(ago / HOUR)} h ago`
  return `${Math.floor(ago / DAY)} d ago`
}

/** Keyed is a delivery as far as the list cares: its identity and when it was recorded. */
export interface Keyed {
  key: string
  time: string
}

/** Pages is the part of an application's deliveries the view has loaded, newest first. */
export interface Pages<T extends Keyed> {
  nodes: T[]
  /** where the next page starts: the last loaded cursor. */
  endCursor: string | null
  hasNextPage: boolean
  totalCount: number
}

/** Page is one answer of the connection. */
export interface Page<T extends Keyed> {
  nodes: T[]
  pageInfo: { hasNextPage: boolean; endCursor?: string | null }
  totalCount: number
}

/** newestFirst orders deliveries as the server does: by time, newest first; equal times keep their order. */
function newestFirst<T extends Keyed>(list: T[]): T[] {
  return list
    .map((d, i) => ({ d, i, t: Date.parse(d.time) || 0 }))
    .sort((a, b) => b.t - a.t || a.i - b.i)
    .map((x) => x.d)
}

/**
 * firstPages starts the list from the newest page, with the deliveries
 * that arrived live while it was asked for (see liveDelivery).
 */
export function firstPages<T extends Keyed>(p: Page<T>, live: readonly T[] = []): Pages<T> {
  const pages: Pages<T> = { nodes: p.nodes, endCursor: p.pageInfo.endCursor ?? null, hasNextPage: p.pageInfo.hasNextPage, totalCount: p.totalCount }
  return live.reduce((acc, d) => liveDelivery(acc, d, false), pages)
}

/**
 * olderPage appends a page read after pages.endCursor; a delivery already
 * shown (its key seen) is not shown twice. A page that does not follow
 * the loaded ones (one asked for before a refresh replaced them) is
 * dropped.
 */
export function olderPage<T extends Keyed>(pages: Pages<T>, after: string, p: Page<T>): Pages<T> {
  if (after !== pages.endCursor) return pages
  const seen = new Set(pages.nodes.map((d) => d.key))
  return {
    nodes: [...pages.nodes, ...p.nodes.filter((d) => !seen.has(d.key))],
    endCursor: p.pageInfo.endCursor ?? pages.endCursor,
    hasNextPage: p.pageInfo.hasNextPage,
    totalCount: p.totalCount,
  }
}

/**
 * liveDelivery merges a delivery the subscription sent: it replaces the
 * record of the same key unless that one is newer, and takes its place
 * by time; a new key counts one more (unless counted, when the page read
 * after it arrived already counts it).
 */
export function liveDelivery<T extends Keyed>(pages: Pages<T>, d: T, count = true): Pages<T> {
  const old = pages.nodes.find((x) => x.key === d.key)
  if (old && (Date.parse(old.time) || 0) > (Date.parse(d.time) || 0)) return pages
  const nodes = newestFirst([d, ...pages.nodes.filter((x) => x.key !== d.key)])
  return { ...pages, nodes, totalCount: pages.totalCount + (old || !count ? 0 : 1) }
}

/**
 * refreshSize is how many deliveries a refresh reads from the newest:
 * as many as are shown, so that a change does not take away the pages a
 * user opened, and at least one page.
 */
export function refreshSize(pages: Pages<Keyed> | null, page: number, max: number): number {
  return Math.min(max, Math.max(page, pages?.nodes.length ?? 0))
}

// The names an annotation subscribe.<trigger>.<service> can carry, as the
// server checks them: the last dot separates trigger and service.
const triggerName = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/
const serviceName = /^[A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?$/
const control = /[\u0000-\u001f\u007f]/

/** catalogTriggers are the built-in triggers (docs/notifications.md), there without configuration. */
export const catalogTriggers = [
  'on-created',
  'on-deleted',
  'on-deployed',
  'on-health-degraded',
  'on-sync-failed',
  'on-sync-running',
  'on-sync-status-unknown',
  'on-sync-succeeded',
] as const

/** triggerChoices are the triggers the subscribe form offers: the catalog's and those already subscribed to. */
export function triggerChoices(subscribed: readonly string[]): string[] {
  return [...new Set([...catalogTriggers, ...subscribed.filter((t) => triggerName.test(t))])].sort()
}

/** parseRecipients reads the recipients a user typed, separated by ";", "," or line breaks, each once. */
export function parseRecipients(text: string): string[] {
  return [...new Set(text.split(/[;,\r\n]/).map((r) => r.trim()))].filter((r) => r !== '')
}

/** MAX_RECIPIENTS is how many recipients one subscription annotation holds at most. */
export const MAX_RECIPIENTS = 50

/**
 * subscribeProblems lists why the server would refuse a subscription
 * (trigger null: the configuration's default triggers), before asking it.
 */
export function subscribeProblems(s: { trigger: string | null; service: string; recipients: readonly string[] }): string[] {
  const out: string[] = []
  if (s.trigger !== null && !triggerName.test(s.trigger)) {
    out.push(s.trigger ? `The trigger "${bounded(s.trigger, 60)}" may hold only letters, digits, "-", "_" and ".".` : 'Name the trigger.')
  }
  if (!s.service) out.push('Name the service as the notifications ConfigMap does: slack, or deploy-log for service.webhook.deploy-log.')
  else if (!serviceName.test(s.service)) out.push(`The service "${bounded(s.service, 60)}" may hold only letters, digits, "-" and "_".`)
  if (s.recipients.length > MAX_RECIPIENTS) out.push(`At most ${MAX_RECIPIENTS} recipients at a time.`)
  for (const r of s.recipients) {
    if (new TextEncoder().encode(r).length > 256) out.push(`The recipient "${bounded(r, 40)}" is longer than 256 bytes.`)
    else if (control.test(r)) out.push(`The recipient "${bounded(r, 40)}" holds a control character.`)
  }
  return out
}

/** Subscribed is one of an application's subscriptions, as the API lists them. */
export interface Subscribed {
  trigger: string
  service: string
  recipients: readonly string[]
  source: string
  annotation: string
  defaultTriggers: boolean
}

/**
 * removable says whether the console can unsubscribe sub: one of the
 * application's own subscribe.* annotations. The list form
 * (<prefix>/subscriptions) and the project's or the ConfigMap's
 * subscriptions are changed where they are declared.
 */
export function removable(sub: Subscribed): boolean {
  return sub.source === 'APPLICATION' && /\/subscribe\.[^/]+$/.test(sub.annotation)
}

/** declaredIn says where a subscription comes from, for a row that cannot be removed here. */
export function declaredIn(sub: Subscribed, project: string): string {
  switch (sub.source) {
    case 'APPLICATION':
      return removable(sub) ? `this application's annotation ${sub.annotation}` : `this application's annotation ${sub.annotation}: edit that list to change it`
    case 'PROJECT':
      return `project ${project}'s annotation ${sub.annotation}: change it on the project`
    case 'DEFAULT':
      return 'the subscriptions of the notifications ConfigMap (every application its selector matches): change them there'
    default:
      return bounded(sub.source, 40)
  }
}

/**
 * unsubscribeInput removes what one row shows: its recipients from its
 * trigger and service (the default triggers' annotation when the row
 * comes from one), or, for a webhook, the whole annotation.
 */
export function unsubscribeInput(app: { name: string; namespace: string }, sub: Subscribed) {
  return {
    application: { name: app.name, namespace: app.namespace },
    trigger: sub.defaultTriggers ? null : sub.trigger,
    service: sub.service,
    recipients: sub.recipients.length > 0 ? [...sub.recipients] : null,
  }
}

/**
 * latest is whichever of two reads of the application is newer by
 * resourceVersion (etcd's revision, which grows with every write): the
 * answer of the user's own change until the server's cache catches up
 * with it. With versions that are not numbers, a wins.
 */
export function latest<T extends { resourceVersion: string }>(a: T | null | undefined, b: T | null | undefined): T | null {
  if (!a || !b) return a ?? b ?? null
  const num = /^\d{1,30}$/
  if (!num.test(a.resourceVersion) || !num.test(b.resourceVersion)) return a
  return BigInt(b.resourceVersion) > BigInt(a.resourceVersion) ? b : a
}
