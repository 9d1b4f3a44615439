// Lays the graph out with ELK in a web worker (elkjs's own worker build),
// so a big tree never blocks scrolling, typing or the live updates.
import ELK from 'elkjs/lib/elk-api.js'
import workerUrl from 'elkjs/lib/elk-worker.min.js?url'

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

let elk: InstanceType<typeof ELK> | null = null

const options = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.layered.spacing.nodeNodeBetweenLayers': '70',
  'elk.spacing.nodeNode': '14',
  // Children keep the order the tree gives them (kind, then name).
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
}

/** layout returns the top-left position of each box. */
export async function layout(boxes: readonly Box[], links: readonly Link[]): Promise<Positions> {
  elk ??= new ELK({ workerUrl })
  const g = await elk.layout({
    id: 'root',
    layoutOptions: options,
    children: boxes.map((b) => ({ id: b.id, width: b.width, height: b.height })),
    edges: links.map((l) => ({ id: l.id, sources: [l.source], targets: [l.target] })),
  })
  const out: Positions = new Map()
  for (const c of g.children ?? []) out.set(c.id, { x: c.x ?? 0, y: c.y ?? 0 })
  return out
}
