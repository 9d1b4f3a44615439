import { Suspense, lazy, useCallback, useMemo } from 'react'
import { BadgeSnippet } from '../app/BadgeSnippet'
import { AppHeader } from '../app/Header'
import { NetworkView } from '../app/NetworkView'
import { Notifications } from '../app/Notifications'
import { Parameters } from '../app/Parameters'
import { PodsView } from '../app/PodsView'
import { parseResource, sameResource, withResource } from '../app/resourceParam'
import { ResourceTable } from '../app/ResourceTable'
import { nodeId, treeSummary, type TreeResource } from '../app/tree'
import { TreeFilters } from '../app/TreeFilters'
import { applyTreeFilter, kindCounts, orphanResources, parseTreeFilter, withTreeFilter, type TreeFilter } from '../app/treefilter'
import { useApplication } from '../app/useApplication'
import { rangeOf } from '../insights/charts'
import { InsightsView } from '../insights/InsightsView'
import { navigate, useLocation } from '../router'
import { Loading } from '../ui/Alert'
import { Link } from '../ui/Link'
import { LoadProblem } from '../ui/LoadProblem'
import { Toggle } from '../ui/Toggle'
import '../app/app.css'

// React Flow and the layout worker load only when the graph is shown.
const ResourceGraph = lazy(() => import('../app/ResourceGraph'))
// The panel (manifests, YAML parsing, logs) loads when a resource is opened.
const ResourcePanel = lazy(() => import('../app/ResourcePanel').then((m) => ({ default: m.ResourcePanel })))

const views = [
  ['graph', 'Graph'],
  ['table', 'Table'],
  ['pods', 'Pods'],
  ['network', 'Network'],
  ['parameters', 'Parameters'],
  ['notifications', 'Notifications'],
  ['insights', 'Insights'],
] as const

type View = (typeof views)[number][0]

// Views about the application itself rather than its resources.
const appViews: readonly View[] = ['parameters', 'notifications', 'insights']

function viewOf(v: string | null): View {
  return views.find(([x]) => x === v)?.[0] ?? 'graph'
}

/** ApplicationPage shows one application: header, resource tree, resource panel. */
export function ApplicationPage({ name, namespace = null }: { name: string; namespace?: string | null }) {
  const { path, search } = useLocation()
  const params = useMemo(() => new URLSearchParams(search), [search])
  const view = viewOf(params.get('view'))
  // Keyed by the filter's own part of the URL: opening a resource keeps the filtered list.
  const filterKey = withTreeFilter('', parseTreeFilter(search))
  const filter = useMemo(() => parseTreeFilter(filterKey), [filterKey])
  const selectedId = useMemo(() => parseResource(params.get('resource')), [params])
  const data = useApplication(name, namespace)
  const app = useMemo(() => ({ name, namespace }), [name, namespace])
  const all = data.tree?.nodes
  const orphanedNodes = data.tree?.orphanedNodes
  const orphans = useMemo(() => orphanResources(orphanedNodes), [orphanedNodes])
  const resources = useMemo(() => all ?? [], [all])
  const shown = useMemo(() => applyTreeFilter(resources, orphans, filter), [resources, orphans, filter])
  const kinds = useMemo(() => kindCounts(filter.orphans === 'hide' ? resources : [...resources, ...orphans]), [resources, orphans, filter.orphans])
  const selected = selectedId ? (resources.find((r) => sameResource(r, selectedId)) ?? null) : null
  const selectedKey = selected ? nodeId(selected) : null

  const select = useCallback(
    (r: TreeResource) => {
      // The API reads only the application's own objects: an orphan has no panel.
      if (r.orphaned) return
      navigate(path + withResource(window.location.search, { group: r.group, kind: r.kind, namespace: r.namespace, name: r.name }))
    },
    [path],
  )
  const setView = (v: View) => {
    const q = new URLSearchParams(search)
    if (v !== 'graph') q.set('view', v)
    else q.delete('view')
    const s = q.toString()
    navigate(path + (s ? `?${s}` : ''), { replace: true })
  }
  const setDays = (d: number) => {
    const q = new URLSearchParams(search)
    if (d !== 30) q.set('days', String(d))
    else q.delete('days')
    navigate(`${path}?${q.toString()}`, { replace: true })
  }
  const setFilter = (f: TreeFilter) => navigate(path + withTreeFilter(search, f), { replace: true })
  const orphanedCount = data.tree?.orphanedCount ?? 0
  const filtered = shown.length !== resources.length || filter.orphans !== 'hide'

  return (
    <section className="app-page" aria-labelledby="app-title">
      <AppHeader app={data.app} name={name} />
      {data.app ? <BadgeSnippet name={name} namespace={namespace} /> : null}
      <LoadProblem state={data.state} name={name} kind="application" resource="applications" back={<Link to="/applications">Back to the applications</Link>} />
      {data.app ? (
        <div className="tree-area">
          <div className="tree-bar">
            <h2 className="visually-hidden">Resources</h2>
            <Toggle label="Resource view" options={views} value={view} onChange={setView} />
            {!appViews.includes(view) ? (
              <span className="k" aria-live="polite">
                {data.tree ? treeSummary(resources, data.tree.truncated) : 'No resource tree yet: the controller has not compared this application.'}
                {orphanedCount > 0 ? `; ${orphanedCount.toLocaleString()} orphaned` : ''}
                {data.tree && filtered && view !== 'network' ? `; the filters show ${shown.length.toLocaleString()}` : ''}
              </span>
            ) : null}
          </div>
          {view === 'parameters' ? (
            <Parameters name={name} namespace={namespace} />
          ) : view === 'insights' ? (
            <InsightsView key={`${namespace ?? ''}/${name}`} scope="APPLICATION" name={name} namespace={namespace} days={rangeOf(params.get('days'))} onDays={setDays} />
          ) : view === 'notifications' ? (
            <Notifications key={`${namespace ?? ''}/${name}`} name={name} namespace={namespace} />
          ) : data.tree ? (
            <div className="tree-main">
              {view !== 'network' ? <TreeFilters filter={filter} kinds={kinds} orphanedCount={orphanedCount} onChange={setFilter} /> : null}
              {view === 'table' ? (
                <ResourceTable resources={shown} changed={data.changed} selected={selectedKey} onSelect={select} />
              ) : view === 'pods' ? (
                <PodsView resources={shown} changed={data.changed} selected={selectedKey} onSelect={select} />
              ) : view === 'network' ? (
                <NetworkView name={name} namespace={namespace} resources={resources} version={data.version} selected={selectedKey} onSelect={select} />
              ) : (
                <Suspense fallback={<Loading what="the graph" />}>
                  <ResourceGraph
                    appName={name}
                    appHealth={data.app.status.health.status}
                    appSync={data.app.status.sync.status}
                    resources={shown}
                    changed={data.changed}
                    selected={selectedKey}
                    onSelect={select}
                  />
                </Suspense>
              )}
            </div>
          ) : null}
        </div>
      ) : null}
      {selectedId && data.app ? (
        <Suspense fallback={null}>
          <ResourcePanel app={app} id={selectedId} resource={selected} version={data.version} onClose={() => navigate(path + withResource(search, null))} />
        </Suspense>
      ) : null}
    </section>
  )
}
