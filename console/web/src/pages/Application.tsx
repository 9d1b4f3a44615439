import { Suspense, lazy, useCallback, useMemo } from 'react'
import { AppHeader } from '../app/Header'
import { ResourceTable } from '../app/ResourceTable'
import { parseResource, sameResource, withResource } from '../app/resourceParam'
import { nodeId, treeSummary, type TreeResource } from '../app/tree'
import { useApplication, type LoadState } from '../app/useApplication'
import '../app/app.css'
import { navigate, useLocation } from '../router'

// React Flow and the layout worker load only when the graph is shown.
const ResourceGraph = lazy(() => import('../app/ResourceGraph'))
// The panel (manifests, YAML parsing, logs) loads when a resource is opened.
const ResourcePanel = lazy(() => import('../app/ResourcePanel').then((m) => ({ default: m.ResourcePanel })))

/** ApplicationPage shows one application: header, resource tree, resource panel. */
export function ApplicationPage({ name }: { name: string }) {
  const { path, search } = useLocation()
  const params = useMemo(() => new URLSearchParams(search), [search])
  const table = params.get('view') === 'table'
  const selectedId = useMemo(() => parseResource(params.get('resource')), [params])
  const data = useApplication(name)
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
      <Problem state={data.state} name={name} />
      {data.app ? (
        <div className="tree-area">
          <div className="tree-bar">
            <h2 className="visually-hidden">Resources</h2>
            <div className="toggle" role="group" aria-label="Resource view">
              <button type="button" aria-pressed={!table} onClick={() => setView('graph')}>
                Graph
              </button>
              <button type="button" aria-pressed={table} onClick={() => setView('table')}>
                Table
              </button>
            </div>
            <span className="k" aria-live="polite">
              {data.tree ? treeSummary(resources, data.tree.truncated) : 'No resource tree yet: the controller has not compared this application.'}
            </span>
          </div>
          {data.tree ? (
            table ? (
              <ResourceTable resources={resources} changed={data.changed} selected={selectedKey} onSelect={select} />
            ) : (
              <Suspense fallback={<p className="empty">Loading the graph…</p>}>
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
          <ResourcePanel app={name} id={selectedId} resource={selected} version={data.version} onClose={() => navigate(path + withResource(search, null))} />
        </Suspense>
      ) : null}
    </section>
  )
}

function Problem({ state, name }: { state: LoadState; name: string }) {
  const back = (
    <a href="/applications" onClick={(e) => (e.preventDefault(), navigate('/applications'))}>
      Back to the applications
    </a>
  )
  switch (state.kind) {
    case 'loading':
      return <p className="empty">Loading {name}…</p>
    case 'ready':
      return null
    case 'notFound':
      return (
        <p className="error" role="alert">
          There is no application named “{name}” (it may have been deleted). Check the name in the address, or pick one from the list. {back}
        </p>
      )
    case 'forbidden':
      return (
        <p className="error" role="alert">
          You may not see “{name}”. Ask an administrator for the get right on applications in its project. {back}
        </p>
      )
    case 'error':
      return (
        <p className="error" role="alert">
          {name} could not be loaded: {state.message} Reload the page to try again.
        </p>
      )
  }
}
