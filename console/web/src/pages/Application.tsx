import { Suspense, lazy, useCallback, useMemo } from 'react'
import { AppHeader } from '../app/Header'
import { parseResource, sameResource, withResource } from '../app/resourceParam'
import { ResourceTable } from '../app/ResourceTable'
import { nodeId, treeSummary, type TreeResource } from '../app/tree'
import { useApplication } from '../app/useApplication'
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
] as const

/** ApplicationPage shows one application: header, resource tree, resource panel. */
export function ApplicationPage({ name, namespace = null }: { name: string; namespace?: string | null }) {
  const { path, search } = useLocation()
  const params = useMemo(() => new URLSearchParams(search), [search])
  const table = params.get('view') === 'table'
  const selectedId = useMemo(() => parseResource(params.get('resource')), [params])
  const data = useApplication(name, namespace)
  const app = useMemo(() => ({ name, namespace }), [name, namespace])
  const resources = data.tree?.nodes ?? []
  const selected = selectedId ? (resources.find((r) => sameResource(r, selectedId)) ?? null) : null
  const selectedKey = selected ? nodeId(selected) : null

  const select = useCallback(
    (r: TreeResource) => navigate(path + withResource(window.location.search, { group: r.group, kind: r.kind, namespace: r.namespace, name: r.name })),
    [path],
  )
  const setView = (v: 'graph' | 'table') => {
    const q = new URLSearchParams(search)
    if (v === 'table') q.set('view', 'table')
    else q.delete('view')
    const s = q.toString()
    navigate(path + (s ? `?${s}` : ''), { replace: true })
  }

  return (
    <section className="app-page" aria-labelledby="app-title">
      <AppHeader app={data.app} name={name} />
      <LoadProblem state={data.state} name={name} kind="application" resource="applications" back={<Link to="/applications">Back to the applications</Link>} />
      {data.app ? (
        <div className="tree-area">
          <div className="tree-bar">
            <h2 className="visually-hidden">Resources</h2>
            <Toggle label="Resource view" options={views} value={table ? 'table' : 'graph'} onChange={setView} />
            <span className="k" aria-live="polite">
              {data.tree ? treeSummary(resources, data.tree.truncated) : 'No resource tree yet: the controller has not compared this application.'}
            </span>
          </div>
          {data.tree ? (
            table ? (
              <ResourceTable resources={resources} changed={data.changed} selected={selectedKey} onSelect={select} />
            ) : (
              <Suspense fallback={<Loading what="the graph" />}>
                <ResourceGraph
                  appName={name}
                  appHealth={data.app.status.health.status}
                  appSync={data.app.status.sync.status}
                  resources={resources}
                  changed={data.changed}
                  selected={selectedKey}
                  onSelect={select}
                />
              </Suspense>
            )
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
