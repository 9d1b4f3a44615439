// The resource tree as a flat table, virtualized: every object of the
// application, however many, with its kind, namespace, name and status.
import { useMemo } from 'react'
import { Badge } from '../ui/Badge'
import { healthBadge, syncBadge } from '../ui/badges'
import { VirtualTable } from '../ui/VirtualTable'
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
  return (
    <VirtualTable
      label="Resources"
      className="table rtable"
      headClassName="rtr th"
      head={
        <>
          <span role="columnheader">Kind</span>
          <span role="columnheader">Namespace</span>
          <span role="columnheader">Name</span>
          <span role="columnheader">Sync</span>
          <span role="columnheader">Health</span>
        </>
      }
      scrollLabel="Resource rows"
      count={rows.length}
      rowHeight={ROW_HEIGHT}
      row={(i, props) => {
        const r = rows[i]!
        const id = nodeId(r)
        return (
          <div
            key={id}
            aria-selected={id === selected}
            className={`rtr${changed.has(id) ? ' flash' : ''}${id === selected ? ' chosen' : ''}${r.missing ? ' missing' : ''}${r.orphaned ? ' orphaned' : ''}`}
            data-kind={r.kind}
            data-missing={r.missing || undefined}
            data-orphaned={r.orphaned || undefined}
            {...props}
          >
            <span role="cell" className="ellipsis" title={r.group ? `${r.kind}.${r.group}` : r.kind}>
              {r.kind}
            </span>
            <span role="cell" className="ellipsis">
              {r.namespace || '—'}
            </span>
            <span role="cell" className="ellipsis">
              {r.orphaned ? (
                <span title={`${r.name}: orphaned, no application tracks it`}>{r.name}</span>
              ) : (
                <button type="button" className="link" onClick={() => onSelect(r)} title={r.name}>
                  {r.name}
                </button>
              )}
            </span>
            <span role="cell">{r.sync ? <Badge badge={syncBadge(r.sync)} /> : r.orphaned ? <span className="orphan-mark">orphaned</span> : null}</span>
            <span role="cell">{r.health ? <Badge badge={healthBadge(r.health.status)} title={r.health.message} /> : null}</span>
          </div>
        )
      }}
    />
  )
}
