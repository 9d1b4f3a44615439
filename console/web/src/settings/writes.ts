// The server lists repositories and clusters from its cache, which may
// not hold a write of a moment ago. A page remembers its own writes and
// shows the list with them applied until the server catches up.

export interface Writes<T> {
  saved: T[]
  removed: string[]
}

export function noWrites<T>(): Writes<T> {
  return { saved: [], removed: [] }
}

/** withSaved records that item was saved (replacing an earlier save of it). */
export function withSaved<T>(w: Writes<T>, item: T, key: (t: T) => string): Writes<T> {
  const k = key(item)
  return { saved: [...w.saved.filter((x) => key(x) !== k), item], removed: w.removed.filter((r) => r !== k) }
}

/** withRemoved records that the item with key k was removed. */
export function withRemoved<T>(w: Writes<T>, k: string, key: (t: T) => string): Writes<T> {
  return { saved: w.saved.filter((x) => key(x) !== k), removed: [...w.removed, k] }
}

/** mergeWrites is listed with the page's own saves and removals applied, ordered by key. */
export function mergeWrites<T>(listed: readonly T[], w: Writes<T>, key: (t: T) => string): T[] {
  const byKey = new Map(listed.map((t) => [key(t), t]))
  for (const t of w.saved) byKey.set(key(t), t)
  for (const k of w.removed) byKey.delete(k)
  return [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, t]) => t)
}

/** refetchSoon reads the list again now, and once more after 2 s, when the server's cache should hold the write. */
export function refetchSoon(refetch: (opts: { requestPolicy: 'network-only' }) => void): void {
  refetch({ requestPolicy: 'network-only' })
  setTimeout(() => refetch({ requestPolicy: 'network-only' }), 2000)
}
