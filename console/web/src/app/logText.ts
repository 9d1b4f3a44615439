// Pure helpers of the pod log view: a bounded buffer of lines, search
// matches to highlight, and container names from an error.

/** MAX_LINES is how many log lines the view keeps; older ones drop off the top. */
export const MAX_LINES = 5000

/** appendLines adds lines to a buffer, keeping the last max. */
export function appendLines(buf: readonly string[], add: readonly string[], max = MAX_LINES): string[] {
  const all = buf.concat(add)
  return all.length > max ? all.slice(all.length - max) : all
}

/** Piece is a run of a line, a search match or not. */
export interface Piece {
  text: string
  match: boolean
}

/** splitMatches cuts a line into pieces around the case-insensitive matches of query. */
export function splitMatches(line: string, query: string): Piece[] {
  if (!query) return [{ text: line, match: false }]
  const out: Piece[] = []
  const lower = line.toLowerCase()
  const q = query.toLowerCase()
  let at = 0
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, i + q.length)) {
    if (i > at) out.push({ text: line.slice(at, i), match: false })
    out.push({ text: line.slice(i, i + q.length), match: true })
    at = i + q.length
  }
  if (at < line.length || out.length === 0) out.push({ text: line.slice(at), match: false })
  return out
}

/** countMatches counts the lines that contain query. */
export function countMatches(lines: readonly string[], query: string): number {
  if (!query) return 0
  const q = query.toLowerCase()
  let n = 0
  for (const l of lines) if (l.toLowerCase().includes(q)) n++
  return n
}

/**
 * containersFromError reads the container names Kubernetes lists when a Pod
 * has several and none was chosen ("... choose one of: [app sidecar]").
 */
export function containersFromError(message: string): string[] {
  const m = /choose one of: \[([^\]]*)\]/.exec(message)
  return m?.[1] ? m[1].split(/\s+/).filter((s) => s !== '') : []
}
