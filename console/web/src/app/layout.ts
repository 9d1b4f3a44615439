// Lays the graph out with ELK in a web worker (elkjs's own worker build),
// so a big tree never blocks scrolling, typing or the live updates. Large
// families of leaves are packed into grids first (see pack.ts).
import ELK from 'elkjs/lib/elk-api.js'
import workerUrl from 'elkjs/lib/elk-worker.min.js?url'
import { planLayout, type Box, type Link, type Positions } from './pack'

export type { Positions } from './pack'

let elk: InstanceType<typeof ELK> | null = null

const options = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.layered.spacing.nodeNodeBetweenLayers': '70',
  'elk.spacing.nodeNode': '14',
  // React Flow draws its own edges; polyline routing only keeps ELK from
  // reserving room for orthogonal ones between wide layers.
  'elk.edgeRouting': 'POLYLINE',
  // A tree has few crossings to minimize. (Keeping the model order
  // instead, considerModelOrder, took 50 s for 600 siblings.)
  'elk.layered.thoroughness': '1',
}

export interface Layout {
  positions: Positions
  /** Leaves placed in a grid by their parent, whose edges are not drawn. */
  packed: ReadonlySet<string>
}

/** layout returns the top-left position of each box. */
export async function layout(boxes: readonly Box[], links: readonly Link[]): Promise<Layout> {
  elk ??= new ELK({ workerUrl })
  const plan = planLayout(boxes, links)
  const g = await elk.layout({
    id: 'root',
    layoutOptions: options,
    children: plan.boxes.map((b) => ({ id: b.id, width: b.width, height: b.height })),
    edges: plan.links.map((l) => ({ id: l.id, sources: [l.source], targets: [l.target] })),
  })
  const laidOut: Positions = new Map()
  for (const c of g.children ?? []) laidOut.set(c.id, { x: c.x ?? 0, y: c.y ?? 0 })
  return { positions: plan.place(laidOut), packed: plan.packed }
}
