// Defense in depth for Secrets: the server masks Secret values before any
// manifest leaves it (controller/diff: each distinct value of a key becomes
// a run of eight or more '+'). Should a value ever arrive unmasked, the
// page masks it again before showing it.
import { isMap, isScalar, parseAllDocuments, Scalar } from 'yaml'

/** MASK is the server's mask for the first distinct value of a key. */
export const MASK = '++++++++'
const masked = /^\+{8,}$/
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration'

/**
 * maskSecret returns yamlText with every data and stringData value of a
 * core Secret (and its last-applied annotation) that is not already a
 * mask replaced by MASK. Other objects are returned as they are. Text that
 * mentions a Secret but cannot be parsed is not shown at all.
 */
export function maskSecret(yamlText: string): string {
  if (!/\bkind:\s*["']?Secret\b/.test(yamlText)) return yamlText
  const docs = parseAllDocuments(yamlText)
  if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return '# Hidden: this Secret could not be read to mask its values.\n'
  let changed = false
  for (const doc of docs) {
    if (doc.get('kind') !== 'Secret' || !isCoreAPI(doc.get('apiVersion'))) continue
    for (const field of ['data', 'stringData']) {
      const data = doc.get(field, true)
      if (!isMap(data)) continue
      for (const pair of data.items) {
        if (isScalar(pair.value) && typeof pair.value.value === 'string' && masked.test(pair.value.value)) continue
        pair.value = new Scalar(MASK)
        changed = true
      }
    }
    const ann = doc.getIn(['metadata', 'annotations'], true)
    if (isMap(ann)) {
      const v = ann.get(LAST_APPLIED)
      if (typeof v === 'string' && !lastAppliedMasked(v)) {
        ann.set(LAST_APPLIED, MASK)
        changed = true
      }
    }
  }
  if (!changed) return yamlText
  return docs.map((d) => d.toString()).join('')
}

function isCoreAPI(v: unknown): boolean {
  return v === 'v1' || v === undefined
}

// The server masks inside the annotation's JSON, or replaces it whole.
function lastAppliedMasked(v: string): boolean {
  if (masked.test(v)) return true
  try {
    const obj = JSON.parse(v) as { data?: Record<string, unknown>; stringData?: Record<string, unknown> }
    return [obj.data, obj.stringData].every((d) => d === undefined || Object.values(d).every((x) => typeof x === 'string' && masked.test(x)))
  } catch {
    return false
  }
}
