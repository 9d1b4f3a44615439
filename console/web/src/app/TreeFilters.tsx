// The resource tree's filter panel: kinds present, sync and health
// statuses, and whether orphaned resources show. The filter lives in the
// URL; this panel only reads and writes it.
import { HEALTH_CODES, SYNC_CODES } from '../filters'
import { Check } from '../ui/form'
import { emptyTreeFilter, filterCount, type TreeFilter } from './treefilter'

function toggled<T>(list: readonly T[], v: T, on: boolean): T[] {
  return on ? [...list.filter((x) => x !== v), v] : list.filter((x) => x !== v)
}

export function TreeFilters({
  filter,
  kinds,
  orphanedCount,
  onChange,
}: {
  filter: TreeFilter
  /** The kinds in the tree (orphans included), with how many of each. */
  kinds: readonly [string, number][]
  /** How many orphaned resources the project reports (0: it reports none or does not monitor them). */
  orphanedCount: number
  onChange: (f: TreeFilter) => void
}) {
  const n = filterCount(filter)
  return (
    <aside className="tree-filters" aria-label="Resource filters">
      <div className="tree-filters-head">
        <strong>Filters</strong>
        {n > 0 ? (
          <button type="button" className="small" onClick={() => onChange(emptyTreeFilter)}>
            Clear ({n})
          </button>
        ) : null}
      </div>
      <fieldset>
        <legend>Orphaned resources</legend>
        <Check
          label={`Show orphaned (${orphanedCount.toLocaleString()})`}
          checked={filter.orphans !== 'hide'}
          onChange={(on) => onChange({ ...filter, orphans: on ? 'show' : 'hide' })}
        />
        <Check label="Only orphaned" disabled={filter.orphans === 'hide'} checked={filter.orphans === 'only'} onChange={(on) => onChange({ ...filter, orphans: on ? 'only' : 'show' })} />
      </fieldset>
      <fieldset>
        <legend>Sync status</legend>
        {SYNC_CODES.map((s) => (
          <Check key={s} label={s} checked={filter.sync.includes(s)} onChange={(on) => onChange({ ...filter, sync: toggled(filter.sync, s, on) })} />
        ))}
      </fieldset>
      <fieldset>
        <legend>Health status</legend>
        {HEALTH_CODES.map((h) => (
          <Check key={h} label={h} checked={filter.health.includes(h)} onChange={(on) => onChange({ ...filter, health: toggled(filter.health, h, on) })} />
        ))}
      </fieldset>
      <fieldset>
        <legend>Kind</legend>
        {/* A kind filtered on stays listed when the tree no longer has it, so it can be unset. */}
        {[...kinds, ...filter.kinds.filter((k) => !kinds.some(([x]) => x === k)).map((k): [string, number] => [k, 0])].map(([k, count]) => (
          <Check key={k} label={k} hint={`(${count.toLocaleString()})`} checked={filter.kinds.includes(k)} onChange={(on) => onChange({ ...filter, kinds: toggled(filter.kinds, k, on) })} />
        ))}
      </fieldset>
    </aside>
  )
}
