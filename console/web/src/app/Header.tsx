// The top of the application page: who the application is, how it compares
// with Git, its health and its last operation, where it comes from and
// where it goes. The values change live; the layout does not.
import { AppActions } from '../actions/AppActions'
import type { AppHeaderFragment } from '../gql/graphql'
import { Badge } from '../ui/Badge'
import { healthBadge, operationBadge, syncBadge } from '../ui/badges'
import { DeepLinks } from '../ui/DeepLinks'
import { destinationText } from '../ui/format'
import { ExternalLink } from '../ui/ExternalLink'
import { shortRevision } from './text'

// Sources lists where the application comes from; for a multi-source
// application each source with the revision it was compared at.
function Sources({ app }: { app: AppHeaderFragment }) {
  const sources = app.spec.source ? [app.spec.source] : app.spec.sources
  const compared = app.spec.source ? [] : (app.status?.sync.revisions ?? [])
  return (
    <>
      {sources.map((s, i) => (
        <span key={i} className="source">
          <ExternalLink url={s.repoURL} />
          {s.chart ? <> · chart {s.chart}</> : s.path ? <> · {s.path}</> : null}
          {s.ref ? <> · ref {s.ref}</> : null}
          {' @ '}
          {s.targetRevision || 'HEAD'}
          {compared[i] ? (
            <>
              {' '}
              <code title={compared[i]} className="rev">
                {shortRevision(compared[i])}
              </code>
            </>
          ) : null}
        </span>
      ))}
    </>
  )
}

export function AppHeader({ app, name }: { app: AppHeaderFragment | null; name: string }) {
  const st = app?.status
  const op = st?.operationState
  const opBadge = operationBadge(op?.phase)
  const rev = st?.sync.revision || st?.sync.revisions[0] || ''
  return (
    <header className="app-head">
      <div className="app-title">
        <h1 id="app-title">{name}</h1>
        {app ? (
          <span className="k">
            project <strong>{app.project}</strong>
            {app.deleting ? <em> · being deleted</em> : null}
          </span>
        ) : null}
        <span className="spacer" />
        <AppActions name={name} />
      </div>
      {app && st ? (
        <dl className="app-facts" aria-live="polite">
          <div>
            <dt>Sync</dt>
            <dd>
              <Badge badge={syncBadge(st.sync.status)} />
              {rev ? (
                <code title={rev} className="rev">
                  {shortRevision(rev)}
                </code>
              ) : null}
              {app.spec.syncPolicy?.automated?.enabled ? <span className="k">auto-sync</span> : null}
            </dd>
          </div>
          <div>
            <dt>Health</dt>
            <dd>
              <Badge badge={healthBadge(st.health.status)} />
              {st.health.message ? <span className="app-msg">{st.health.message}</span> : null}
            </dd>
          </div>
          {opBadge && op ? (
            <div>
              <dt>Last operation</dt>
              <dd>
                <Badge badge={opBadge} />
                <span className="app-msg">{op.message}</span>
              </dd>
            </div>
          ) : null}
          <div>
            <dt>Source</dt>
            <dd className="wrap">
              <Sources app={app} />
            </dd>
          </div>
          <div>
            <dt>Destination</dt>
            <dd>{destinationText(app.spec.destination)}</dd>
          </div>
          {app.links.length > 0 ? (
            <div>
              <dt>Links</dt>
              <dd>
                <DeepLinks links={app.links} label={`Links of ${name}`} />
              </dd>
            </div>
          ) : null}
        </dl>
      ) : null}
      {st && st.conditions.length > 0 ? (
        <ul className="conditions" aria-label="Conditions">
          {st.conditions.map((c, i) => (
            <li key={i} className={/Error/.test(c.type) ? 'error' : 'k'}>
              <strong>{c.type}</strong>: {c.message}
            </li>
          ))}
        </ul>
      ) : null}
    </header>
  )
}
