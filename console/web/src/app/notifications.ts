// How the Notifications view reads an application's deliveries: outcome
// badges, bounded text, relative times, and the pages of the list as
// "Older deliveries" and live updates change them. Tested without a
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
  if (Number.isNaN(at)) return t
  const ago = now - at
  if (ago < -MINUTE || ago >= 30 * DAY) return new Date(at).toLocaleDateString()
  if (ago < MINUTE) return 'just now'
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`
  if (ago < DAY) return `${Math.floor(ago / HOUR)} h ago`
  return `${Math.floor(ago / DAY)} d ago`
}

/** Edge is a delivery with its cursor, as the connection gives it. */
export interface Edge<T> {
  cursor: string
  node: T
}

/** Pages is the part of an application's deliveries the view has loaded, newest first. */
export interface Pages<T> {
  edges: Edge<T>[]
  /** where the next page starts: the last loaded cursor. */
  endCursor: string | null
  hasNextPage: boolean
  totalCount: number
}

/** Page is one answer of the connection. */
export interface Page<T> {
  edges: Edge<T>[]
  pageInfo: { hasNextPage: boolean; endCursor?: string | null }
  totalCount: number
}

/** firstPages starts the list from the newest page. */
export function firstPages<T>(p: Page<T>): Pages<T> {
  return { edges: p.edges, endCursor: p.pageInfo.endCursor ?? null, hasNextPage: p.pageInfo.hasNextPage, totalCount: p.totalCount }
}

/**
 * olderPage appends a page read after pages.endCursor; a delivery already
 * shown (its cursor seen) is not shown twice. A page that does not follow
 * the loaded ones (one asked for before a refresh replaced them) is
 * dropped.
 */
export function olderPage<T>(pages: Pages<T>, after: string, p: Page<T>): Pages<T> {
  if (after !== pages.endCursor) return pages
  const seen = new Set(pages.edges.map((e) => e.cursor))
  return {
    edges: [...pages.edges, ...p.edges.filter((e) => !seen.has(e.cursor))],
    endCursor: p.pageInfo.endCursor ?? pages.endCursor,
    hasNextPage: p.pageInfo.hasNextPage,
    totalCount: p.totalCount,
  }
}

/**
 * refreshSize is how many deliveries a refresh reads from the newest:
 * as many as are shown, so that a change does not take away the pages a
 * user opened, and at least one page.
 */
export function refreshSize(pages: Pages<unknown> | null, page: number, max: number): number {
  return Math.min(max, Math.max(page, pages?.edges.length ?? 0))
}
