// Small text rules of the application page, tested without a browser.
import type { ResourceId } from './resourceParam'

/** shortRevision shows a commit SHA as Git's short form; other revisions (tags, chart versions) as they are. */
export function shortRevision(rev: string): string {
  return /^[0-9a-f]{40}$/.test(rev) ? rev.slice(0, 7) : rev
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * mentions says whether an event note names the object: "kind/name", or
 * the name as a whole word (not inside a longer name such as web-1 in
 * web-12).
 */
export function mentions(note: string, id: ResourceId): boolean {
  if (note.includes(`${id.kind}/${id.name}`)) return true
  return new RegExp(`(^|[^\\w.-])${escapeRegExp(id.name)}($|[^\\w.-])`).test(note)
}
