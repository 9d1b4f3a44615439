// The resource tree as a graph (React Flow), laid out by ELK in a worker.
// This module is loaded lazily: React Flow stays out of the main bundle.
import { Background, Controls, Handle, Position, ReactFlow, useReactFlow, useStore, type Edge, type Node, type NodeProps, type NodeTypes } from '@xyflow/react'
import { useEffect, useMemo, useRef, useState } from 'react'
import '@xyflow/react/dist/style.css'
import { Badge } from '../ui/Badge'
import { healthBadge, syncBadge } from '../ui/badges'
import { layout, type Layout } from './layout'
import { buildView, kindAbbrev, nodeChanged, nodeId, type TreeResource, type ViewNode } from './tree'

/** How many more nodes each "show more" lays out. */
export const NODE_CAP = 300
const WIDTH = 230
const HEIGHT = 58

export interface ResourceGraphProps {
  appName: string
  appHealth: string | null
  appSync: string | null
  resources: readonly TreeResource[]
  changed: ReadonlySet<string>
  selected: string | null
  onSelect: (r: TreeResource) => void
}

interface Data extends Record<string, unknown> {
  node: ViewNode
  label: string
  health: string | null
  sync: string | null
  changed: boolean
  selected: boolean
  toggle: (id: string) => void
  expand: (id: string) => void
  select: (r: TreeResource) => void
}

type FlowNode = Node<Data>

function Fold({ data }: { data: Data }) {
  const n = data.node
  if (n.type === 'group' || !n.hasChildren) return null
  return (
    <button
      type="button"
      className="fold nodrag"
      aria-expanded={!n.collapsed}
      aria-label={`${n.collapsed ? 'Expand' : 'Collapse'} the children of ${data.label}`}
      onClick={(e) => {
        e.stopPropagation()
        data.toggle(n.id)
      }}
    >
      {n.collapsed ? '+' : '−'}
    </button>
  )
}

function Badges({ data }: { data: Data }) {
  return (
    <span className="rbadges">
      {data.health ? <Badge badge={healthBadge(data.health)} /> : null}
      {data.sync ? <Badge badge={syncBadge(data.sync)} /> : null}
    </span>
  )
}

function frameClass(data: Data, kind: string): string {
  return `rnode rnode-${kind}${data.changed ? ' flash' : ''}${data.selected ? ' chosen' : ''}`
}

function ResourceNodeView({ data }: NodeProps<FlowNode>) {
  const n = data.node
  if (n.type !== 'resource') return null
  const r = n.resource
  return (
    <div
      className={`${frameClass(data, 'resource')}${r.missing ? ' rnode-missing' : ''}${r.orphaned ? ' rnode-orphaned' : ''}`}
      data-kind={r.kind}
      data-name={r.name}
      data-missing={r.missing || undefined}
      data-orphaned={r.orphaned || undefined}
    >
      <Handle type="target" position={Position.Left} />
      <span className="kind" title={r.kind}>
        {kindAbbrev(r.kind)}
      </span>
      <span className="rmain">
        {r.orphaned ? (
          // No panel reads an orphan (the API reads only the application's objects).
          <span className="rname" title={`${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name} (orphaned: no application tracks it)`}>
            {r.name}
          </span>
        ) : (
          <button
            type="button"
            className="rname nodrag"
            title={`${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}${r.missing ? ' (missing from the cluster: a sync creates it)' : ''}`}
            onClick={(e) => (e.stopPropagation(), data.select(r))}
          >
            {r.name}
          </button>
        )}
        {r.orphaned ? <span className="orphan-mark">orphaned: no application tracks it</span> : <Badges data={data} />}
      </span>
      <Fold data={data} />
      <Handle type="source" position={Position.Right} />
    </div>
  )
}

function GroupNodeView({ data }: NodeProps<FlowNode>) {
  const n = data.node
  if (n.type !== 'group') return null
  return (
    <div className={frameClass(data, 'group')} data-kind="group">
      <Handle type="target" position={Position.Left} />
      <span className="kind">{kindAbbrev(n.kind)}</span>
      <span className="rmain">
        <button type="button" className="rname nodrag" aria-label={`Show the ${n.members.length} ${n.kind}s one by one`} onClick={(e) => (e.stopPropagation(), data.expand(n.id))}>
          {n.members.length} {n.kind.toLowerCase()}s
        </button>
        <Badges data={data} />
      </span>
      <Handle type="source" position={Position.Right} />
    </div>
  )
}

function AppNodeView({ data }: NodeProps<FlowNode>) {
  return (
    <div className={frameClass(data, 'app')} data-kind="Application">
      <span className="kind">app</span>
      <span className="rmain">
        <strong className="rname">{data.label}</strong>
        <Badges data={data} />
      </span>
      <Fold data={data} />
      <Handle type="source" position={Position.Right} />
    </div>
  )
}

// The view fits the graph again when its shape or the screen width changes
// (a tree that grows, a turned phone), unless the user has panned or zoomed
// since: then it stays where they put it.
function AutoFit({ shape, userMoved }: { shape: string; userMoved: { current: boolean } }) {
  const { fitView } = useReactFlow()
  const width = useStore((s) => s.width)
  const lastWidth = useRef(width)
  useEffect(() => {
    const resized = lastWidth.current !== width
    lastWidth.current = width
    if (userMoved.current && !resized) return
    // After React Flow has measured the new nodes.
    const frame = requestAnimationFrame(() => void fitView(fitOptions))
    return () => cancelAnimationFrame(frame)
  }, [shape, width, fitView, userMoved])
  return null
}

const fitOptions = { maxZoom: 1 }

const nodeTypes: NodeTypes = { resource: ResourceNodeView, group: GroupNodeView, app: AppNodeView }

function toggled(s: ReadonlySet<string>, id: string): Set<string> {
  const next = new Set(s)
  if (next.has(id)) next.delete(id)
  else next.add(id)
  return next
}

export default function ResourceGraph(props: ResourceGraphProps) {
  const { resources, changed, selected, onSelect } = props
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set())
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set())
  const [limit, setLimit] = useState(NODE_CAP)
  const view = useMemo(() => buildView(resources, { collapsed, expanded, limit }), [resources, collapsed, expanded, limit])

  // Only a change of shape is laid out again; status updates reuse the positions.
  const shape = useMemo(() => view.nodes.map((n) => n.id).join('\n') + '\n\n' + view.edges.map((e) => e.id).join('\n'), [view])
  const [laidOut, setLaidOut] = useState<({ shape: string } & Layout) | null>(null)
  const [layoutError, setLayoutError] = useState<string | null>(null)
  const userMoved = useRef(false)
  useEffect(() => {
    let alive = true
    layout(
      view.nodes.map((n) => ({ id: n.id, width: WIDTH, height: HEIGHT })),
      view.edges,
    ).then(
      (l) => {
        if (!alive) return
        setLaidOut({ shape, ...l })
        setLayoutError(null)
      },
      (e: unknown) => alive && setLayoutError(String(e)),
    )
    return () => {
      alive = false
    }
    // view is read when its shape changes; a status update keeps the shape.
  }, [shape])

  const nodes: FlowNode[] = useMemo(() => {
    if (!laidOut) return []
    const toggle = (id: string) => setCollapsed((s) => toggled(s, id))
    const expand = (id: string) => setExpanded((s) => toggled(s, id))
    const out: FlowNode[] = []
    for (const n of view.nodes) {
      const position = laidOut.positions.get(n.id)
      if (!position) continue
      const base = { changed: nodeChanged(n, changed), toggle, expand, select: onSelect }
      const data: Data =
        n.type === 'app'
          ? { ...base, node: n, label: props.appName, health: props.appHealth, sync: props.appSync, selected: false }
          : n.type === 'group'
            ? { ...base, node: n, label: `${n.members.length} ${n.kind}s`, health: n.health, sync: null, selected: n.members.some((m) => nodeId(m) === selected) }
            : { ...base, node: n, label: n.resource.name, health: n.resource.health?.status ?? null, sync: n.resource.sync ?? null, selected: n.id === selected }
      // measured: every node has the size it is drawn at. Without it React
      // Flow treats each new node object (every tree update makes them) as
      // not yet measured and drops its handle bounds; when that lands
      // between its measuring a node and rendering it, the node never gets
      // them back and its edges, and the fit, never come.
      out.push({ id: n.id, type: n.type, position, data, width: WIDTH, height: HEIGHT, measured: { width: WIDTH, height: HEIGHT }, draggable: false, connectable: false })
    }
    return out
  }, [view, laidOut, changed, selected, onSelect, props.appName, props.appHealth, props.appSync])
  const edges: Edge[] = useMemo(() => {
    if (!laidOut) return []
    return view.edges.filter((e) => laidOut.positions.has(e.source) && laidOut.positions.has(e.target) && !laidOut.packed.has(e.target))
  }, [view, laidOut])

  const hidden = view.total - view.nodes.length
  return (
    <div className="graph" data-nodes={laidOut ? nodes.length : 0} data-layout={laidOut?.shape === shape ? 'done' : 'pending'}>
      <div className="graph-bar" role="toolbar" aria-label="Graph">
        {hidden > 0 ? (
          <>
            <span className="k">
              Showing {view.nodes.length.toLocaleString()} of {view.total.toLocaleString()} nodes.
            </span>
            <button type="button" className="small" onClick={() => setLimit((l) => l + NODE_CAP)}>
              Show {Math.min(hidden, NODE_CAP).toLocaleString()} more
            </button>
          </>
        ) : null}
        {expanded.size > 0 ? (
          <button type="button" className="small" onClick={() => setExpanded(new Set())}>
            Group Pods again
          </button>
        ) : null}
        {collapsed.size > 0 ? (
          <button type="button" className="small" onClick={() => setCollapsed(new Set())}>
            Expand all
          </button>
        ) : null}
        {laidOut?.shape !== shape ? <span className="k">Laying out {view.nodes.length.toLocaleString()} nodes…</span> : null}
        {layoutError ? <span className="error">The layout failed: {layoutError}</span> : null}
      </div>
      {laidOut ? (
        <ReactFlow
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          fitView
          fitViewOptions={fitOptions}
          onMoveStart={(e) => {
            if (e) userMoved.current = true
          }}
          minZoom={0.05}
          maxZoom={2}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          // Keyboard users reach each node through its buttons; focusable node
          // frames would add a second stop per node (the table view lists all).
          nodesFocusable={false}
          edgesFocusable={false}
          // A click anywhere on a node does what its button does (React Flow
          // also lets clicks through to nodes only with a handler).
          onNodeClick={(_, n) => {
            const v = n.data.node
            if (v.type === 'resource') onSelect(v.resource)
            else if (v.type === 'group') setExpanded((s) => toggled(s, v.id))
          }}
          // Up to a few hundred nodes, panning only moves one transformed layer;
          // mounting nodes as they scroll into view would cost more than it saves.
          onlyRenderVisibleElements={nodes.length > 600}
          aria-label={`Resource tree of ${props.appName}`}
        >
          <AutoFit shape={laidOut.shape} userMoved={userMoved} />
          <Background gap={24} />
          <Controls showInteractive={false} />
        </ReactFlow>
      ) : null}
    </div>
  )
}
