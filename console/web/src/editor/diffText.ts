// Helpers for showing a diff of two manifests. They know nothing of the DOM,
// so they are tested without a browser.
import { diff } from '@codemirror/merge'
import type { DiffMode } from './types'

/** manifestText turns an optional manifest into text that ends in one newline ('' when absent). */
export function manifestText(yaml: string | null | undefined): string {
  if (!yaml) return ''
  return yaml.endsWith('\n') ? yaml : `${yaml}\n`
}

/** LineChanges counts lines only in the live text (removed) and only in the desired one (added). */
export interface LineChanges {
  added: number
  removed: number
}

// Lines become single characters so that the character diff of the merge
// package works on whole lines. Code points skip the surrogate range, which
// would split one character in two.
const FIRST = 0x100
const LAST = 0xffff
const SURROGATES = 0xdfff - 0xd800 + 1

function lineCodes(lines: readonly string[], codes: Map<string, string>): string | null {
  let out = ''
  for (const line of lines) {
    let c = codes.get(line)
    if (c === undefined) {
      let n = FIRST + codes.size
      if (n >= 0xd800) n += SURROGATES
      if (n > LAST) return null
      c = String.fromCharCode(n)
      codes.set(line, c)
    }
    out += c
  }
  return out
}

function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

/**
 * lineChanges counts changed lines between live and desired, or returns null
 * when the texts have too many distinct lines to count this way (the diff
 * itself still shows).
 */
export function lineChanges(live: string, desired: string): LineChanges | null {
  const codes = new Map<string, string>()
  const a = lineCodes(splitLines(live), codes)
  const b = lineCodes(splitLines(desired), codes)
  if (a === null || b === null) return null
  let added = 0
  let removed = 0
  for (const c of diff(a, b)) {
    removed += c.toA - c.fromA
    added += c.toB - c.fromB
  }
  return { added, removed }
}

/** changeSummary says in words how live differs from desired. */
export function changeSummary(c: LineChanges | null): string {
  if (c === null) return 'Too large to count changed lines.'
  if (c.added === 0 && c.removed === 0) return 'Live and desired are the same.'
  const plural = (n: number) => (n === 1 ? 'line' : 'lines')
  return `${c.removed} ${plural(c.removed)} only live, ${c.added} ${plural(c.added)} only desired.`
}

/** defaultDiffMode is side by side unless the screen is too narrow for two columns. */
export function defaultDiffMode(width: number): DiffMode {
  return width < 760 ? 'inline' : 'split'
}
