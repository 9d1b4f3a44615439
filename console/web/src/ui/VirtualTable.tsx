// A table that renders only the rows in view, however many it has: the
// applications list and an application's resources both use it.
import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useRef, type CSSProperties, type ReactNode } from 'react'

/** What a row element must carry: its role, its place for assistive technology, and its position. */
export interface RowProps {
  role: 'row'
  'aria-rowindex': number
  style: CSSProperties
}

/** How many rows before the end a table asks for more. */
const NEAR_END = 30

/** useNearEnd calls onNearEnd when the last rendered item comes within NEAR_END items of the end of count. */
export function useNearEnd(lastIndex: number, count: number, onNearEnd: (() => void) | undefined) {
  useEffect(() => {
    if (onNearEnd && count > 0 && lastIndex >= count - NEAR_END) onNearEnd()
  }, [lastIndex, count, onNearEnd])
}

/**
 * VirtualTable is an ARIA table of count rows of rowHeight pixels: head is
 * its header row's cells, row(index, props) renders one row, spreading
 * props on its element. onNearEnd is called as the end comes into view.
 */
export function VirtualTable(props: {
  label: string
  className: string
  headClassName: string
  head: ReactNode
  scrollLabel: string
  count: number
  rowHeight: number
  row: (index: number, props: RowProps) => ReactNode
  onNearEnd?: () => void
}) {
  const { count, rowHeight } = props
  const scroller = useRef<HTMLDivElement>(null)
  const v = useVirtualizer({ count, getScrollElement: () => scroller.current, estimateSize: () => rowHeight, overscan: 12 })
  const items = v.getVirtualItems()
  useNearEnd(items.at(-1)?.index ?? 0, count, props.onNearEnd)
  return (
    <div className={props.className} role="table" aria-label={props.label} aria-rowcount={count + 1}>
      <div className={props.headClassName} role="row">
        {props.head}
      </div>
      <div className="scroller" ref={scroller} tabIndex={0} aria-label={props.scrollLabel}>
        <div style={{ height: v.getTotalSize(), position: 'relative' }} role="rowgroup">
          {items.map((it) =>
            props.row(it.index, {
              role: 'row',
              'aria-rowindex': it.index + 2,
              style: { position: 'absolute', top: 0, left: 0, right: 0, height: rowHeight, transform: `translateY(${it.start}px)` },
            }),
          )}
        </div>
      </div>
    </div>
  )
}
