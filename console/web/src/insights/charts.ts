// Pure helpers of the insights charts: ranges, durations as people read
// them, and the geometry of hand-drawn SVG bars and lines.

/** RANGES are the ranges the page offers, in days back from today. */
export const RANGES = [7, 30, 90] as const
export type RangeDays = (typeof RANGES)[number]

/** rangeOf parses a ?days= value, 30 by default. */
export function rangeOf(v: string | null): RangeDays {
  const n = Number(v)
  return (RANGES as readonly number[]).includes(n) ? (n as RangeDays) : 30
}

/**
 * window is the query's range: the last `days` UTC days, today included
 * (from midnight `days - 1` days ago to the next midnight).
 */
export function window(days: number, now: number): { from: string; to: string } {
  const day = 86_400_000
  const end = Math.floor(now / day) * day + day
  return { from: new Date(end - days * day).toISOString(), to: new Date(end).toISOString() }
}

/** duration reads seconds as the two largest units: "1 h 12 min", "45 s", "3 d 4 h". */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '0 s'
  const units: [number, string][] = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'min'],
    [1, 's'],
  ]
  const parts: string[] = []
  let rest = Math.round(seconds)
  for (const [size, name] of units) {
    if (rest >= size || (parts.length === 0 && size === 1)) {
      parts.push(`${Math.floor(rest / size)} ${name}`)
      rest %= size
    }
    if (parts.length === 2) break
    if (parts.length === 1 && rest === 0) break
  }
  return parts.join(' ')
}

/** percent reads a ratio as a whole percentage. */
export function percent(ratio: number): string {
  return `${Math.round(ratio * 100)} %`
}

/** Bar is one bar of a chart, in the SVG's units. */
export interface Bar {
  x: number
  y: number
  width: number
  height: number
}

/**
 * bars places values as bars in a width × height box, one slot per value
 * with a gap between them, scaled to max (the largest value when left out).
 */
export function bars(values: number[], width: number, height: number, max?: number): Bar[] {
  const top = Math.max(max ?? Math.max(0, ...values), 1)
  const slot = values.length > 0 ? width / values.length : width
  const gap = Math.min(2, slot * 0.2)
  return values.map((v, i) => {
    const h = (Math.max(v, 0) / top) * height
    return { x: i * slot + gap / 2, y: height - h, width: Math.max(slot - gap, 0.5), height: h }
  })
}

/**
 * linePoints is the SVG polyline of values in the middle of each bar slot,
 * leaving out the slots whose value is null (no sample).
 */
export function linePoints(values: (number | null)[], width: number, height: number): string {
  const top = Math.max(...values.map((v) => v ?? 0), 1)
  const slot = values.length > 0 ? width / values.length : width
  const out: string[] = []
  values.forEach((v, i) => {
    if (v === null) return
    const x = i * slot + slot / 2
    const y = height - (v / top) * height
    out.push(`${round(x)},${round(y)}`)
  })
  return out.join(' ')
}

function round(n: number): number {
  return Math.round(n * 10) / 10
}
