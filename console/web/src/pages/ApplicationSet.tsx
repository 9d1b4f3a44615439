import { useMemo, useState } from 'react'
import { useMutation } from 'urql'
import { parse } from 'yaml'
import { editableManifest, toYaml } from '../actions/appform'
import { DeleteSetMutation } from '../appsets/documents'
import { SetEditor } from '../appsets/SetEditor'
import { useApplicationSet } from '../appsets/useApplicationSet'
import { actionBadge, generatorsSummary, rolloutBadge, rolloutSteps, setState } from '../appsets/view'
import '../appsets/appsets.css'
import { YamlView } from '../editor'
import type { SetPageFragment } from '../gql/graphql'
import { SETS_PATH, appPath, navigate } from '../router'
import { ErrorLine } from '../ui/Alert'
import { Badge } from '../ui/Badge'
import { healthBadge, syncBadge } from '../ui/badges'
import { ConfirmButton } from '../ui/ConfirmButton'
import { errorText } from '../ui/errors'
import { dateTime } from '../ui/format'
import { Link } from '../ui/Link'
import { LoadProblem } from '../ui/LoadProblem'

/**
 * ApplicationSetPage shows one ApplicationSet, live: its state and
 * conditions, the Applications it generated with their sync and health,
 * what its last generation did element by element, and a RollingSync's
 * steps; with Edit and Delete for those RBAC lets.
 */
export function ApplicationSetPage({ name, namespace = null }: { name: string; namespace?: string | null }) {
  const { state, set } = useApplicationSet(name, namespace)
  return (
    <section className="sets" aria-labelledby="set-title">
      <p className="crumbs">
        <Link to={SETS_PATH}>ApplicationSets</Link> /
      </p>
      <div className="set-head">
        <h1 id="set-title">{name}</h1>
        {set ? <SetBadge set={set} /> : null}
      </div>
      <LoadProblem state={state} name={name} kind="ApplicationSet" resource="applicationsets" back={<Link to={SETS_PATH}>Back to the ApplicationSets</Link>} />
      {set ? <SetBody set={set} /> : null}
    </section>
  )
}

function SetBadge({ set }: { set: SetPageFragment }) {
  const s = setState(set.status.conditions)
  return <Badge badge={s.badge} title={s.message} />
}

function SetBody({ set }: { set: SetPageFragment }) {
  const [editing, setEditing] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [deleteState, del] = useMutation(DeleteSetMutation)
  const manifest = useMemo(() => toYaml(editableManifest(parse(set.yaml) as Record<string, unknown>)), [set.yaml])

  async function doDelete() {
    setError(null)
    const res = await del({ name: set.name, namespace: set.namespace })
    if (res.error) setError(errorText(`Deleting ${set.name} failed`, res.error))
    else navigate(SETS_PATH)
  }

  return (
    <>
      {/* Only the actions RBAC lets: none, no bar. */}
      {set.update || set.delete ? (
        <div className="action-bar set-head" role="toolbar" aria-label={`Actions on ${set.name}`}>
        {set.update ? (
          <button type="button" disabled={set.deleting || editing} onClick={() => setEditing(true)}>
            Edit…
          </button>
        ) : null}
        {set.delete ? (
          <ConfirmButton
            label="Delete"
            confirm={`Delete ${set.name} and the Applications it generated?`}
            disabled={set.deleting || deleteState.fetching}
            onConfirm={() => void doDelete()}
          />
        ) : null}
          {set.deleting ? <em>Being deleted</em> : null}
        </div>
      ) : null}
      <ErrorLine error={error} onDismiss={() => setError(null)} />
      {editing ? (
        <div className="set-part">
          <h2>Edit {set.name}</h2>
          <SetEditor mode="edit" initial={manifest} set={set} onDone={() => setEditing(false)} onCancel={() => setEditing(false)} />
        </div>
      ) : null}
      <Facts set={set} />
      <Conditions set={set} />
      <GeneratedApps set={set} />
      <Rollout set={set} />
      <Generation set={set} />
      <details className="set-part">
        <summary>Manifest</summary>
        <YamlView value={set.yaml} label={`Manifest of ${set.name}`} />
      </details>
    </>
  )
}

function Facts({ set }: { set: SetPageFragment }) {
  return (
    <dl className="facts set-part">
      <dt>Namespace</dt>
      <dd>{set.namespace}</dd>
      <dt>Project</dt>
      <dd>{set.project}</dd>
      <dt>Generators</dt>
      <dd>{generatorsSummary(set.spec.generators)}</dd>
      <dt>Application name</dt>
      <dd>
        <code>{set.spec.template.name}</code>
      </dd>
      <dt>Changes to Applications</dt>
      <dd>
        {set.spec.syncPolicy?.applicationsSync ?? 'sync'}
        {set.spec.syncPolicy?.preserveResourcesOnDeletion ? ', resources kept on deletion' : ''}
      </dd>
      <dt>Strategy</dt>
      <dd>{set.spec.strategy ?? 'AllAtOnce'}</dd>
      <dt>Created</dt>
      <dd>{dateTime(set.createdAt)}</dd>
    </dl>
  )
}

function Conditions({ set }: { set: SetPageFragment }) {
  const list = set.status.conditions
  return (
    <section className="set-part" aria-labelledby="set-conditions">
      <h2 id="set-conditions">Conditions</h2>
      {list.length === 0 ? <p className="empty">None yet: the controller has not generated this set.</p> : null}
      <ul className="set-apps">
        {list.map((c) => (
          <li key={c.type} className="set-line" data-condition={c.type}>
            <strong>{c.type}</strong>
            <span className={c.type === 'ErrorOccurred' && c.status === 'True' ? 'error' : 'k'}>{c.status}</span>
            {c.reason ? <code>{c.reason}</code> : null}
            <span>{c.message}</span>
            {c.lastTransitionTime ? <span className="k">since {dateTime(c.lastTransitionTime)}</span> : null}
          </li>
        ))}
      </ul>
    </section>
  )
}

function GeneratedApps({ set }: { set: SetPageFragment }) {
  const apps = set.status.resources
  return (
    <section className="set-part" aria-labelledby="set-apps">
      <h2 id="set-apps">Applications ({set.status.resourcesCount.toLocaleString()})</h2>
      {apps.length === 0 ? <p className="empty">The set owns no Application yet.</p> : null}
      <ul className="set-apps" aria-label="Generated applications">
        {apps.map((a) => (
          <li key={`${a.namespace}/${a.name}`} className="set-line" data-app={a.name}>
            <Link to={appPath(a.name, a.namespace)}>{a.name}</Link>
            <Badge badge={syncBadge(a.status)} />
            {a.health ? <Badge badge={healthBadge(a.health.status)} title={a.health.message} /> : null}
          </li>
        ))}
      </ul>
      {apps.length < set.status.resourcesCount ? <p className="k">The status lists the first {apps.length.toLocaleString()}.</p> : null}
    </section>
  )
}

function Rollout({ set }: { set: SetPageFragment }) {
  const progress = set.status.applicationStatus
  if (set.spec.strategy !== 'RollingSync' && progress.length === 0) return null
  const steps = rolloutSteps(progress)
  return (
    <section className="set-part" aria-labelledby="set-rollout">
      <h2 id="set-rollout">RollingSync</h2>
      {steps.length === 0 ? <p className="empty">No Application has entered the rollout yet.</p> : null}
      <ol className="set-steps">
        {steps.map((s) => (
          <li key={s.step} data-step={s.step}>
            <h3>{s.step ? `Step ${s.step}` : 'In no step'}</h3>
            <ul className="set-apps">
              {s.apps.map((a) => (
                <li key={a.application} className="set-line" data-app={a.application}>
                  <Link to={appPath(a.application, set.namespace)}>{a.application}</Link>
                  <Badge badge={rolloutBadge(a.status)} />
                  <span className="k">{a.message}</span>
                  {a.targetRevisions.length > 0 ? <code>{a.targetRevisions.join(', ')}</code> : null}
                  {a.lastTransitionTime ? <span className="k">since {dateTime(a.lastTransitionTime)}</span> : null}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ol>
    </section>
  )
}

function Generation({ set }: { set: SetPageFragment }) {
  const elements = set.status.generated
  if (elements.length === 0) return null
  return (
    <section className="set-part" aria-labelledby="set-generation">
      <h2 id="set-generation">Last generation</h2>
      <ul className="set-apps" aria-label="Generated elements">
        {elements.map((e, i) => (
          <li key={i} className="set-line" data-element={e.name || e.params}>
            <Badge badge={actionBadge(e.action)} />
            <strong>{e.name || '(no Application)'}</strong>
            {e.generator >= 0 ? <span className="k">generator {e.generator}</span> : null}
            {e.params ? <code>{e.params}</code> : null}
            <span className={e.action === 'Failed' ? 'error' : undefined}>{e.message}</span>
          </li>
        ))}
      </ul>
    </section>
  )
}
