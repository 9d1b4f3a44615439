// The live object holds much that Git never sets (status, uid, defaults the
// API server fills in), which would drown the real differences. Like
// `kubectl diff` for the fields one applies, the diff can show the live
// object cut down to the fields the desired one has, in the desired
// one's order, so both sides line up and only real changes differ.
import { parse, stringify } from 'yaml'

type Value = unknown

function isObject(v: Value): v is Record<string, Value> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** project keeps of live what desired has, in desired's order; absent fields stay absent. */
export function project(live: Value, desired: Value): Value {
  if (isObject(desired) && isObject(live)) {
    const out: Record<string, Value> = {}
    for (const k of Object.keys(desired)) if (Object.hasOwn(live, k)) out[k] = project(live[k], desired[k])
    return out
  }
  if (Array.isArray(desired) && Array.isArray(live)) {
    return live.map((item, i) => (i < desired.length ? project(item, desired[i]) : item))
  }
  return live
}

/** ComparedTexts are the two sides the diff shows. */
export interface ComparedTexts {
  live: string
  desired: string
}

/**
 * comparedTexts returns live cut down to the fields of desired, both in
 * the same layout; the texts as they are when either side is missing or
 * is not a single YAML object.
 */
export function comparedTexts(live: string, desired: string): ComparedTexts {
  if (!live.trim() || !desired.trim()) return { live, desired }
  let l: Value
  let d: Value
  try {
    l = parse(live)
    d = parse(desired)
  } catch {
    return { live, desired }
  }
  if (!isObject(l) || !isObject(d)) return { live, desired }
  return { live: stringify(project(l, d)), desired: stringify(d) }
}
