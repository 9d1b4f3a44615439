// The panel of one resource: its summary, live and desired manifests, the
// diff between them, its events and, for a Pod, its log and a terminal. Desired manifests
// and diffs exist for the resources Git declares; objects they own
// (ReplicaSets, Pods ...) have their live manifest, read from the cluster.
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react'
import { useQuery } from 'urql'
import { DiffView, YamlView } from '../editor'
import type { EventRowFragment } from '../gql/graphql'
import type { AppRef } from '../router'
import { ErrorLine, Loading } from '../ui/Alert'
import { Badge } from '../ui/Badge'
import { healthBadge, syncBadge } from '../ui/badges'
import { errorMessage } from '../ui/errors'
import { dateTime } from '../ui/format'
import { comparedTexts } from './compare'
import { AppEventsQuery, LiveResourceQuery, ManagedResourceQuery } from './documents'
import { maskSecret } from './mask'
import { PodLogs } from './PodLogs'
import { PodTerminal } from './PodTerminal'
import { ResourceActions } from './ResourceActions'
import type { ResourceId } from './resourceParam'
import { ResourceLinks } from './ResourceLinks'
import { mentions } from './text'
import type { TreeResource } from './tree'

type Tab = 'summary' | 'live' | 'desired' | 'diff' | 'events' | 'logs' | 'terminal'

const tabLabels: Record<Tab, string> = { summary: 'Summary', live: 'Live', desired: 'Desired', diff: 'Diff', events: 'Events', logs: 'Logs', terminal: 'Terminal' }

export interface ResourcePanelProps {
  app: AppRef
  id: ResourceId
  /** The object in the current tree; null when the tree does not hold it (any more). */
  resource: TreeResource | null
  /** Changes with every tree update, so the manifests are read again. */
  version: number
  onClose: () => void
}

function isSecret(id: ResourceId): boolean {
  return id.group === '' && id.kind === 'Secret'
}

export function ResourcePanel({ app, id, resource, version, onClose }: ResourcePanelProps) {
  const isPod = id.group === '' && id.kind === 'Pod'
  const tabs: Tab[] = ['summary', 'live', 'desired', 'diff', 'events', ...(isPod ? (['logs', 'terminal'] as const) : [])]
  const [tab, setTab] = useState<Tab>('summary')
  const heading = useRef<HTMLHeadingElement>(null)
  const key = `${id.group}/${id.kind}/${id.namespace}/${id.name}`
  useEffect(() => {
    setTab('summary')
    heading.current?.focus()
  }, [key])

  const [managed, refetch] = useQuery({ query: ManagedResourceQuery, variables: { app: app.name, appNamespace: app.namespace, ...id }, requestPolicy: 'network-only' })
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' })
  }, [version, refetch])
  const m = managed.data?.application?.managedResources[0] ?? null
  const mask = (s: string) => (isSecret(id) ? maskSecret(s) : s)

  // Arrow keys move between tabs, as in any tab list.
  const onTabKey = (e: KeyboardEvent) => {
    const i = tabs.indexOf(tab)
    const next = e.key === 'ArrowRight' ? tabs[(i + 1) % tabs.length] : e.key === 'ArrowLeft' ? tabs[(i - 1 + tabs.length) % tabs.length] : undefined
    if (next) {
      e.preventDefault()
      setTab(next)
      document.getElementById(`rtab-${next}`)?.focus()
    }
  }

  const noManifest = managed.fetching && !managed.data ? (
    <Loading />
  ) : managed.error ? (
    <ErrorLine error={errorMessage(managed.error)} />
  ) : (
    <p className="empty">
      Git does not declare this object{resource?.parentRefs.length ? ' (another object of the application owns it)' : ''}, so there is nothing to compare. Its live
      manifest, events{isPod ? ' and log' : ''} are in the other tabs.
    </p>
  )

  return (
    <aside
      className="rpanel"
      aria-labelledby="rpanel-title"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose()
      }}
    >
      <div className="rpanel-head">
        <h2 id="rpanel-title" ref={heading} tabIndex={-1}>
          <span className="k">{id.kind}</span> {id.name}
        </h2>
        {resource && !resource.missing ? <ResourceActions app={app} id={id} version={version} /> : null}
        <button type="button" className="small" onClick={onClose} aria-label="Close the resource panel">
          Close
        </button>
      </div>
      <div role="tablist" aria-label="Resource views" className="tabs" onKeyDown={onTabKey}>
        {tabs.map((t) => (
          <button
            key={t}
            id={`rtab-${t}`}
            type="button"
            role="tab"
            aria-selected={tab === t}
            aria-controls="rpanel-body"
            tabIndex={tab === t ? 0 : -1}
            onClick={() => setTab(t)}
          >
            {tabLabels[t]}
            {t === 'diff' && m && m.status === 'OutOfSync' ? ' •' : ''}
          </button>
        ))}
      </div>
      <div id="rpanel-body" role="tabpanel" aria-labelledby={`rtab-${tab}`} className="rpanel-body">
        {tab === 'summary' ? <Summary id={id} resource={resource} status={m?.status ?? null} requiresPruning={m?.requiresPruning ?? false} /> : null}
        {tab === 'summary' && resource && !resource.missing ? <ResourceLinks app={app} id={id} version={version} /> : null}
        {tab === 'live' ? (
          m?.live ? (
            <YamlView value={mask(m.live)} label={`Live manifest of ${id.kind} ${id.name}`} />
          ) : m ? (
            <p className="empty">The object does not exist in the cluster.</p>
          ) : managed.data ? (
            <LiveTab app={app} id={id} version={version} mask={mask} />
          ) : (
            noManifest
          )
        ) : null}
        {tab === 'desired' ? m?.desired ? <YamlView value={mask(m.desired)} label={`Desired manifest of ${id.kind} ${id.name}`} /> : m ? <p className="empty">Git no longer declares this object; a sync with prune deletes it.</p> : noManifest : null}
        {tab === 'diff' ? m ? <DiffTab live={mask(m.live)} desired={mask(m.desired)} /> : noManifest : null}
        {tab === 'events' ? <Events app={app} id={id} version={version} /> : null}
        {tab === 'logs' && isPod ? <PodLogs app={app} namespace={id.namespace} pod={id.name} images={resource?.images ?? []} /> : null}
        {tab === 'terminal' && isPod ? <PodTerminal app={app} namespace={id.namespace} pod={id.name} /> : null}
      </div>
    </aside>
  )
}

// LiveTab reads an object Git does not declare from its cluster.
function LiveTab({ app, id, version, mask }: { app: AppRef; id: ResourceId; version: number; mask: (s: string) => string }) {
  const [res, refetch] = useQuery({ query: LiveResourceQuery, variables: { app: app.name, appNamespace: app.namespace, ...id, events: 0 }, requestPolicy: 'network-only' })
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' })
  }, [version, refetch])
  if (res.error) return <ErrorLine error={errorMessage(res.error)} />
  if (!res.data) return <Loading />
  const manifest = res.data.application?.liveResource.manifest ?? ''
  return manifest ? (
    <YamlView value={mask(manifest)} label={`Live manifest of ${id.kind} ${id.name}`} />
  ) : (
    <p className="empty">The object does not exist in the cluster.</p>
  )
}

function DiffTab({ live, desired }: { live: string; desired: string }) {
  const [gitFields, setGitFields] = useState(true)
  const texts = useMemo(() => (gitFields ? comparedTexts(live, desired) : { live, desired }), [gitFields, live, desired])
  return (
    <>
      <label className="diff-option">
        <input type="checkbox" checked={gitFields} onChange={(e) => setGitFields(e.target.checked)} /> Compare only the fields Git sets (leave out status and
        defaults)
      </label>
      <DiffView live={texts.live} desired={texts.desired} />
    </>
  )
}

function Summary({ id, resource, status, requiresPruning }: { id: ResourceId; resource: TreeResource | null; status: string | null; requiresPruning: boolean }) {
  const sync = resource?.sync ?? status
  return (
    <dl className="summary">
      <dt>Kind</dt>
      <dd>{id.group ? `${id.kind}.${id.group}` : id.kind}</dd>
      <dt>Name</dt>
      <dd>{id.name}</dd>
      <dt>Namespace</dt>
      <dd>{id.namespace || '— (cluster-scoped)'}</dd>
      {sync ? (
        <>
          <dt>Sync</dt>
          <dd>
            <Badge badge={syncBadge(sync)} />
            {requiresPruning ? <span className="k"> gone from Git: prune deletes it</span> : null}
          </dd>
        </>
      ) : null}
      {resource?.health ? (
        <>
          <dt>Health</dt>
          <dd>
            <Badge badge={healthBadge(resource.health.status)} /> {resource.health.message}
          </dd>
        </>
      ) : null}
      {resource?.images.length ? (
        <>
          <dt>Images</dt>
          <dd>
            {resource.images.map((i) => (
              <code key={i} className="image">
                {i}
              </code>
            ))}
          </dd>
        </>
      ) : null}
      {resource?.info.map((f) => (
        <div key={f.name} className="summary-row">
          <dt>{f.name}</dt>
          <dd>{f.value}</dd>
        </div>
      ))}
      {!resource ? (
        <>
          <dt>In the tree</dt>
          <dd>No: the object does not exist in the cluster now.</dd>
        </>
      ) : resource.missing ? (
        <>
          <dt>In the cluster</dt>
          <dd>Not yet: Git declares it, and a sync creates it.</dd>
        </>
      ) : null}
    </dl>
  )
}

function Events({ app, id, version }: { app: AppRef; id: ResourceId; version: number }) {
  const [own, refetchOwn] = useQuery({ query: LiveResourceQuery, variables: { app: app.name, appNamespace: app.namespace, ...id, events: 100 }, requestPolicy: 'network-only' })
  const [res, refetch] = useQuery({ query: AppEventsQuery, variables: { app: app.name, appNamespace: app.namespace }, requestPolicy: 'network-only' })
  useEffect(() => {
    if (version > 0) {
      refetchOwn({ requestPolicy: 'network-only' })
      refetch({ requestPolicy: 'network-only' })
    }
  }, [version, refetch, refetchOwn])
  // The application's events that name this object: sync results and
  // health changes do.
  const appEvents = res.data?.application?.events.filter((e) => mentions(e.note, id)) ?? []
  return (
    <>
      <h3 className="events-title">In the cluster</h3>
      {own.error ? (
        <ErrorLine error={errorMessage(own.error)} />
      ) : !own.data ? (
        <Loading />
      ) : (
        <EventList events={own.data.application?.liveResource.events ?? []} />
      )}
      <h3 className="events-title">Of the application, naming this object</h3>
      {res.error ? (
        <ErrorLine error={errorMessage(res.error)} />
      ) : !res.data ? (
        <Loading />
      ) : (
        <EventList events={appEvents} />
      )}
    </>
  )
}

function EventList({ events }: { events: EventRowFragment[] }) {
  if (events.length === 0) return <p className="empty">None.</p>
  return (
    <ul className="events">
      {events.map((e, i) => (
        <li key={i} className={e.type === 'Warning' ? 'warning' : undefined}>
          <span className="k">{e.time ? dateTime(e.time) : ''}</span> <strong>{e.reason}</strong>
          {e.count > 1 ? <span className="k"> ×{e.count}</span> : null} {e.note}
        </li>
      ))}
    </ul>
  )
}
