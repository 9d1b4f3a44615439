import { useVirtualizer } from '@tanstack/react-virtual'
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { useClient, useQuery } from 'urql'
import { ProjectsQuery, ServerNamespaceProbe, StatusCountsQuery } from '../documents'
import { HEALTH_CODES, SORTS, SYNC_CODES, formatView, parseView, toFilter, type ListView, type Sort } from '../filters'
import { serverPermissions, type Permissions } from '../permissions'
import { appLabel, appPath, navigate, useLocation } from '../router'
import type { AppRow } from '../rows'
import { SyncButton } from '../SyncButton'
import { ErrorLine } from '../ui/Alert'
import { Badge } from '../ui/Badge'
import { healthBadge, operationBadge, syncBadge } from '../ui/badges'
import { destinationText, sourceText } from '../ui/format'
import { splitList } from '../ui/input'
import { Link } from '../ui/Link'
import { Toggle } from '../ui/Toggle'
import { useSearchText } from '../ui/useSearchText'
import { VirtualTable, useNearEnd } from '../ui/VirtualTable'
import { useAppList } from '../useAppList'

const sortLabels: Record<Sort, string> = {
  name: 'Name',
  '-name': 'Name, Z to A',
  sync: 'Out of sync first',
  health: 'Worst health first',
  '-lastDeployed': 'Last deployed, newest first',
  lastDeployed: 'Last deployed, oldest first',
}

const layouts = [
  ['table', 'Table'],
  ['tiles', 'Tiles'],
] as const

export function ApplicationsPage() {
  const { path, search } = useLocation()
  const view = useMemo(() => parseView(search), [search])
  const list = useAppList(view)
  const client = useClient()
  const [projects] = useQuery({ query: ProjectsQuery })
  const projectNames = projects.data?.projects.nodes.map((p) => p.name) ?? []
  // RBAC objects leave the server's namespace out. Projects live in it; an
  // app looked up by name alone is found in it.
  const projectsNamespace = projects.data?.projects.nodes[0]?.namespace ?? null
  const firstName = list.rows.list[0]?.name
  const [probe] = useQuery({
    query: ServerNamespaceProbe,
    variables: { name: firstName ?? '' },
    pause: projectsNamespace !== null || !firstName || projects.fetching,
  })
  const serverNamespace = projectsNamespace ?? probe.data?.application?.namespace ?? null
  const permissions = useMemo(() => serverPermissions(client, 'applications', 'sync'), [client])
  const [actionError, setActionError] = useState<string | null>(null)
  const actions: Actions = { serverNamespace, permissions, onError: setActionError }

  function update(change: Partial<ListView>, replace = false) {
    const q = formatView({ ...view, ...change })
    navigate(q ? `${path}?${q}` : path, { replace })
  }

  return (
    <section className="apps" aria-labelledby="apps-title">
      <div className="apps-head">
        <h1 id="apps-title">Applications</h1>
        <p className="count" aria-live="polite">
          {list.totalCount === null ? 'Loading…' : `${list.totalCount.toLocaleString()} ${list.totalCount === 1 ? 'application' : 'applications'}`}
        </p>
        <span className="spacer" />
        <Toggle label="Layout" options={layouts} value={view.layout} onChange={(layout) => update({ layout })} />
      </div>
      <FilterBar view={view} update={update} projectNames={projectNames} />
      <StatusCounts view={view} update={update} refresh={list.eventCount} />
      <ErrorLine error={actionError} onDismiss={() => setActionError(null)} />
      <ErrorLine error={list.error} />
      {list.totalCount === 0 ? (
        <p className="empty">No application matches these filters.</p>
      ) : view.layout === 'table' ? (
        <AppTable rows={list.rows.list} hasNext={list.hasNext} loadMore={list.loadMore} actions={actions} />
      ) : (
        <AppTiles rows={list.rows.list} hasNext={list.hasNext} loadMore={list.loadMore} actions={actions} />
      )}
      {list.hasNext ? (
        <p className="more">
          <button type="button" onClick={list.loadMore} disabled={list.loading}>
            {list.loading ? 'Loading…' : `Load more (${list.rows.list.length.toLocaleString()} of ${list.totalCount?.toLocaleString()} shown)`}
          </button>
        </p>
      ) : null}
    </section>
  )
}

function FilterBar({
  view,
  update,
  projectNames,
}: {
  view: ListView
  update: (c: Partial<ListView>, replace?: boolean) => void
  projectNames: string[]
}) {
  // Typing filters after a pause, replacing the history entry.
  const [text, setText] = useSearchText(view.search, (search) => update({ search }, true))
  const [ns, setNs] = useState(view.namespaces.join(', '))
  useEffect(() => setNs(view.namespaces.join(', ')), [view.namespaces])

  return (
    <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
      <label>
        Search
        <input type="search" name="q" placeholder="Application name" value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <Select label="Project" name="project" value={view.projects[0] ?? ''} options={union(projectNames, view.projects)} onChange={(v) => update({ projects: v ? [v] : [] })} />
      <Select label="Sync" name="sync" value={view.sync[0] ?? ''} options={SYNC_CODES} onChange={(v) => update({ sync: v ? [v as ListView['sync'][number]] : [] })} />
      <Select label="Health" name="health" value={view.health[0] ?? ''} options={HEALTH_CODES} onChange={(v) => update({ health: v ? [v as ListView['health'][number]] : [] })} />
      <label>
        Namespace
        <input
          name="namespace"
          placeholder="Destination namespace"
          value={ns}
          onChange={(e) => setNs(e.target.value)}
          onBlur={() => update({ namespaces: splitList(ns) })}
          onKeyDown={(e) => {
            if (e.key === 'Enter') update({ namespaces: splitList(ns) })
          }}
        />
      </label>
      <Select
        label="Auto-sync"
        name="auto"
        value={view.autoSync === null ? '' : String(view.autoSync)}
        options={['true', 'false']}
        labels={{ true: 'On', false: 'Off' }}
        onChange={(v) => update({ autoSync: v === '' ? null : v === 'true' })}
      />
      <Select label="Order" name="sort" value={view.sort} options={SORTS} labels={sortLabels} all={null} onChange={(v) => update({ sort: v as Sort })} />
    </form>
  )
}

function Select(props: {
  label: string
  name: string
  value: string
  options: readonly string[]
  labels?: Record<string, string>
  all?: string | null
  onChange: (v: string) => void
}) {
  const all = props.all === undefined ? 'All' : props.all
  return (
    <label>
      {props.label}
      <select name={props.name} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        {all !== null ? <option value="">{all}</option> : null}
        {props.options.map((o) => (
          <option key={o} value={o}>
            {props.labels?.[o] ?? o}
          </option>
        ))}
      </select>
    </label>
  )
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])].sort()
}

function StatusCounts({ view, update, refresh }: { view: ListView; update: (c: Partial<ListView>) => void; refresh: number }) {
  // A sync count ignores the sync filter, a health count the health
  // filter, so the chips show where each choice would lead.
  const bySync = toFilter({ ...view, sync: [] })
  const byHealth = toFilter({ ...view, health: [] })
  const [counts, reexecute] = useQuery({
    query: StatusCountsQuery,
    variables: {
      synced: { ...bySync, syncStatus: ['Synced'] },
      outOfSync: { ...bySync, syncStatus: ['OutOfSync'] },
      healthy: { ...byHealth, health: ['Healthy'] },
      progressing: { ...byHealth, health: ['Progressing'] },
      degraded: { ...byHealth, health: ['Degraded'] },
      missing: { ...byHealth, health: ['Missing'] },
    },
  })
  // Live events move apps between statuses: recount, at most every 5 s.
  const last = useRef(0)
  useEffect(() => {
    if (refresh === 0) return
    const wait = Math.max(0, last.current + 5000 - Date.now())
    const t = setTimeout(() => {
      last.current = Date.now()
      reexecute({ requestPolicy: 'network-only' })
    }, wait)
    return () => clearTimeout(t)
  }, [refresh, reexecute])
  const d = counts.data
  if (!d) return null
  const chip = (label: ReactNode, n: number, active: boolean, onClick: () => void) => (
    <button type="button" className="chip" aria-pressed={active} onClick={onClick}>
      {label} <strong>{n.toLocaleString()}</strong>
    </button>
  )
  return (
    <div className="counts" aria-label="Applications by status">
      {chip(<Badge badge={syncBadge('Synced')} />, d.synced.totalCount, view.sync.includes('Synced'), () => update({ sync: view.sync.includes('Synced') ? [] : ['Synced'] }))}
      {chip(<Badge badge={syncBadge('OutOfSync')} />, d.outOfSync.totalCount, view.sync.includes('OutOfSync'), () =>
        update({ sync: view.sync.includes('OutOfSync') ? [] : ['OutOfSync'] }),
      )}
      {(
        [
          ['Healthy', d.healthy.totalCount],
          ['Progressing', d.progressing.totalCount],
          ['Degraded', d.degraded.totalCount],
          ['Missing', d.missing.totalCount],
        ] as const
      ).map(([h, n]) => (
        <span key={h}>{chip(<Badge badge={healthBadge(h)} />, n, view.health.includes(h), () => update({ health: view.health.includes(h) ? [] : [h] }))}</span>
      ))}
    </div>
  )
}

/** AppLink links an app's page, named NAMESPACE/NAME outside the server's namespace. */
function AppLink({ app, serverNamespace }: { app: { name: string; namespace: string }; serverNamespace: string | null }) {
  const ns = app.namespace === serverNamespace ? null : app.namespace
  return <Link to={appPath(app.name, ns)}>{appLabel(app, serverNamespace)}</Link>
}

function destination(r: AppRow): string {
  return destinationText(r.spec.destination)
}

function source(r: AppRow): string {
  return sourceText(r.spec)
}

function StatusBadges({ r }: { r: AppRow }) {
  const op = operationBadge(r.status.operationState?.phase)
  return (
    <>
      <Badge badge={syncBadge(r.status.sync.status)} title={r.status.sync.revision} />
      <Badge badge={healthBadge(r.status.health.status)} title={r.status.health.message} />
      {op ? <Badge badge={op} title={r.status.operationState?.message} /> : null}
    </>
  )
}

interface Actions {
  serverNamespace: string | null
  permissions: Permissions
  onError: (message: string) => void
}

interface ListProps {
  rows: AppRow[]
  hasNext: boolean
  loadMore: () => void
  actions: Actions
}

const ROW_HEIGHT = 44

function AppTable({ rows, hasNext, loadMore, actions }: ListProps) {
  return (
    <VirtualTable
      label="Applications"
      className="table"
      headClassName="tr th"
      head={
        <>
          <span role="columnheader">Name</span>
          <span role="columnheader">Project</span>
          <span role="columnheader">Status</span>
          <span role="columnheader">Destination</span>
          <span role="columnheader">Source</span>
          <span role="columnheader">
            <span className="visually-hidden">Actions</span>
          </span>
        </>
      }
      scrollLabel="Application rows"
      count={rows.length}
      rowHeight={ROW_HEIGHT}
      onNearEnd={hasNext ? loadMore : undefined}
      row={(i, props) => {
        const r = rows[i]!
        return (
          <div key={r.id} className="tr" data-app={r.name} {...props}>
            <span role="cell" className="name" title={`${r.namespace}/${r.name}`}>
              <AppLink app={r} serverNamespace={actions.serverNamespace} />
              {r.deleting ? <em> (deleting)</em> : null}
            </span>
            <span role="cell">{r.project}</span>
            <span role="cell" className="status">
              <StatusBadges r={r} />
            </span>
            <span role="cell" className="ellipsis" title={destination(r)}>
              {destination(r)}
            </span>
            <span role="cell" className="ellipsis" title={source(r)}>
              {source(r)}
            </span>
            <span role="cell">
              <SyncButton app={r} {...actions} />
            </span>
          </div>
        )
      }}
    />
  )
}

const TILE_WIDTH = 300
const TILE_HEIGHT = 132

function AppTiles(props: ListProps) {
  const { rows } = props
  const scroller = useRef<HTMLDivElement>(null)
  const [cols, setCols] = useState(3)
  useEffect(() => {
    const el = scroller.current
    if (!el) return
    const ro = new ResizeObserver(() => setCols(Math.max(1, Math.floor(el.clientWidth / TILE_WIDTH))))
    ro.observe(el)
    return () => ro.disconnect()
  }, [])
  const lines = Math.ceil(rows.length / cols)
  const v = useVirtualizer({ count: lines, getScrollElement: () => scroller.current, estimateSize: () => TILE_HEIGHT, overscan: 4 })
  const items = v.getVirtualItems()
  useNearEnd(((items.at(-1)?.index ?? 0) + 1) * cols, rows.length, props.hasNext ? props.loadMore : undefined)
  return (
    <div className="scroller tiles" ref={scroller} tabIndex={0} aria-label="Applications">
      <div style={{ height: v.getTotalSize(), position: 'relative' }}>
        {items.map((it) => (
          <ul
            key={it.index}
            className="tile-line"
            style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${it.start}px)`, gridTemplateColumns: `repeat(${cols}, 1fr)` }}
          >
            {rows.slice(it.index * cols, it.index * cols + cols).map((r) => (
              <li key={r.id} className="tile" data-app={r.name}>
                <h2 title={`${r.namespace}/${r.name}`}>
                  <AppLink app={r} serverNamespace={props.actions.serverNamespace} />
                </h2>
                <p className="status">
                  <StatusBadges r={r} />
                  <span className="spacer" />
                  <SyncButton app={r} {...props.actions} />
                </p>
                <p className="ellipsis" title={destination(r)}>
                  <span className="k">Project</span> {r.project} · {destination(r)}
                </p>
                <p className="ellipsis" title={source(r)}>
                  {source(r)}
                </p>
              </li>
            ))}
          </ul>
        ))}
      </div>
    </div>
  )
}
