// The resource tree as a flat table, virtualized: every object of the
// application, however many, with its kind, namespace, name and status.
import { useVirtualizer } from '@tanstack/react-virtual'
import { useMemo, useRef } from 'react'
import { Badge } from '../Badge'
import { healthBadge, syncBadge } from '../badges'
import { nodeId, tableRows, type TreeResource } from './tree'

const ROW_HEIGHT = 40

export function ResourceTable({
  resources,
  changed,
  selected,
  onSelect,
}: {
  resources: readonly TreeResource[]
  changed: ReadonlySet<string>
  selected: string | null
  onSelect: (r: TreeResource) => void
}) {
  const rows = useMemo(() => tableRows(resources), [resources])
  const scroller = useRef<HTMLDivElement>(null)
  const v = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 12 })
  return (
    <div className="table rtable" role="table" aria-label="Resources" aria-rowcount={rows.length + 1}>
      <div className="rtr th" role="row">
        <span role="columnheader">Kind</span>
        <span role="columnheader">Namespace</span>
        <span role="columnheader">Name</span>
        <span role="columnheader">Sync</span>
        <span role="columnheader">Health</span>
      </div>
      <div className="scroller" ref={scroller} tabIndex={0} aria-label="Resource rows">
        <div style={{ height: v.getTotalSize(), position: 'relative' }} role="rowgroup">
          {v.getVirtualItems().map((it) => {
            const r = rows[it.index]!
            const id = nodeId(r)
            return (
              <div
                key={id}
                role="row"
                aria-rowindex={it.index + 2}
                aria-selected={id === selected}
                className={`rtr${changed.has(id) ? ' flash' : ''}${id === selected ? ' chosen' : ''}${r.missing ? ' missing' : ''}`}
                data-kind={r.kind}
                data-missing={r.missing || undefined}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${it.start}px)` }}
              >
                <span role="cell" className="ellipsis" title={r.group ? `${r.kind}.${r.group}` : r.kind}>
                  {r.kind}
                </span>
                <span role="cell" className="ellipsis">
                  {r.namespace || '—'}
                </span>
                <span role="cell" className="ellipsis">
                  <button type="button" className="link" onClick={() => onSelect(r)} title={r.name}>
                    {r.name}
                  </button>
                </span>
                <span role="cell">{r.sync ? <Badge badge={syncBadge(r.sync)} /> : null}</span>
                <span role="cell">{r.health ? <Badge badge={healthBadge(r.health.status)} title={r.health.message} /> : null}</span>
              </div>
            )
          })}
        </div>
      </div>
    </div>
  )
}
