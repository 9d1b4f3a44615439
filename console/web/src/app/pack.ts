// Many leaves under one parent (hundreds of ConfigMaps at the top of an
// application, say) would make ELK lay out one very tall column, slowly.
// Instead they are packed: ELK sees one box the size of a grid of them,
// and the leaves are placed in that grid afterwards.

export interface Box {
  id: string
  width: number
  height: number
}

export interface Link {
  id: string
  source: string
  target: string
}

export type Positions = Map<string, { x: number; y: number }>

/** PACK_MIN leaves of one parent or more are packed into a grid. */
export const PACK_MIN = 12
const GAP_X = 16
const GAP_Y = 14

export interface Plan {
  /** What ELK lays out: the boxes and links with each packed family as one box. */
  boxes: Box[]
  links: Link[]
  /** Ids of the leaves placed in a grid (their edges are not drawn: the grid sits by its parent). */
  packed: Set<string>
  /** place turns ELK's positions into positions of every original box. */
  place: (laidOut: Positions) => Positions
}

/** planLayout packs the leaves of each parent with at least min of them. */
export function planLayout(boxes: readonly Box[], links: readonly Link[], min = PACK_MIN): Plan {
  const outgoing = new Set(links.map((l) => l.source))
  const incoming = new Map<string, number>()
  for (const l of links) incoming.set(l.target, (incoming.get(l.target) ?? 0) + 1)
  const byId = new Map(boxes.map((b) => [b.id, b]))
  const leaves = new Map<string, string[]>()
  for (const l of links) {
    if (outgoing.has(l.target) || incoming.get(l.target) !== 1) continue
    const list = leaves.get(l.source)
    if (list) list.push(l.target)
    else leaves.set(l.source, [l.target])
  }
  const packed = new Set<string>()
  const grids: { id: string; members: string[]; cols: number; cell: { w: number; h: number } }[] = []
  const extra: Box[] = []
  const extraLinks: Link[] = []
  for (const [parent, members] of leaves) {
    if (members.length < min) continue
    const w = Math.max(...members.map((m) => byId.get(m)?.width ?? 0)) + GAP_X
    const h = Math.max(...members.map((m) => byId.get(m)?.height ?? 0)) + GAP_Y
    // Columns for a roughly square block.
    const cols = Math.max(1, Math.ceil(Math.sqrt((members.length * h) / w)))
    const rows = Math.ceil(members.length / cols)
    const id = `pack:${parent}`
    for (const m of members) packed.add(m)
    grids.push({ id, members, cols, cell: { w, h } })
    extra.push({ id, width: cols * w - GAP_X, height: rows * h - GAP_Y })
    extraLinks.push({ id: `${parent}->${id}`, source: parent, target: id })
  }
  return {
    boxes: boxes.filter((b) => !packed.has(b.id)).concat(extra),
    links: links.filter((l) => !packed.has(l.target)).concat(extraLinks),
    packed,
    place(laidOut) {
      const out: Positions = new Map()
      for (const [id, p] of laidOut) if (!id.startsWith('pack:')) out.set(id, p)
      for (const g of grids) {
        const at = laidOut.get(g.id)
        if (!at) continue
        g.members.forEach((m, i) => out.set(m, { x: at.x + (i % g.cols) * g.cell.w, y: at.y + Math.floor(i / g.cols) * g.cell.h }))
      }
      return out
    },
  }
}
