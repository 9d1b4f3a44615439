import { useState } from 'react'
import { useMutation } from 'urql'
import type { ActionsAppFragment } from '../gql/graphql'
import { ErrorLine } from '../ui/Alert'
import { Dialog } from '../ui/Dialog'
import { errorText } from '../ui/errors'
import { ExternalLink } from '../ui/ExternalLink'
import { Check } from '../ui/form'
import { dateTime } from '../ui/format'
import { RollbackMutation } from './documents'
import { operationRunning, startedBy } from './progress'

type Entry = ActionsAppFragment['status']['history'][number]

/**
 * HistoryPanel lists the application's deployments, newest first, with a
 * rollback per entry (confirmed first) for callers who may sync.
 */
export function HistoryPanel({ app, canSync, onClose, onStarted }: { app: ActionsAppFragment; canSync: boolean; onClose: () => void; onStarted: () => void }) {
  const [confirm, setConfirm] = useState<Entry | null>(null)
  const [prune, setPrune] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [state, rollback] = useMutation(RollbackMutation)
  const autoSync = app.spec.syncPolicy?.automated?.enabled === true
  const busy = operationRunning(app.status.operationState?.phase)
  const entries = [...app.status.history].reverse()

  async function doRollback(e: Entry) {
    setError(null)
    const res = await rollback({ input: { application: { name: app.name, namespace: app.namespace }, id: e.id, prune } })
    if (res.error) {
      setError(errorText(`Rollback of ${app.name} to deployment ${e.id} was refused`, res.error))
      return
    }
    onStarted()
    onClose()
  }

  return (
    <Dialog title={`History of ${app.name}`} onClose={onClose} wide>
      {autoSync && canSync ? <p className="note">Auto-sync is on: turn it off to roll back, or it would sync forward again.</p> : null}
      {entries.length === 0 ? <p className="empty">No deployment yet.</p> : null}
      <ol className="history" aria-label="Deployments, newest first">
        {entries.map((e) => (
          <li key={e.id} data-history-id={e.id}>
            <div className="history-main">
              <strong>#{e.id}</strong> <code title={e.revision}>{e.revision.slice(0, 7) || '—'}</code>{' '}
              <span className="k">
                deployed {dateTime(e.deployedAt)}
                {e.deployStartedAt ? ` in ${took(e.deployStartedAt, e.deployedAt)}` : ''}
              </span>
              {startedBy(e.initiatedBy) ? <span className="k">{startedBy(e.initiatedBy)}</span> : null}
            </div>
            <div className="k ellipsis">
              <ExternalLink url={e.source.repoURL} /> {e.source.chart ? `chart ${e.source.chart}` : e.source.path ? `/ ${e.source.path}` : ''}
              {e.source.targetRevision ? ` @ ${e.source.targetRevision}` : ''}
            </div>
            {canSync ? (
              confirm?.id === e.id ? (
                <div className="confirm" role="group" aria-label={`Confirm rollback to #${e.id}`}>
                  <span>
                    Roll back to #{e.id} ({e.revision.slice(0, 7)})?
                  </span>
                  <Check label="Prune" checked={prune} onChange={setPrune} />
                  <button type="button" className="primary small" disabled={state.fetching} onClick={() => void doRollback(e)}>
                    {state.fetching ? 'Requesting…' : 'Confirm rollback'}
                  </button>
                  <button type="button" className="small" onClick={() => setConfirm(null)}>
                    Cancel
                  </button>
                </div>
              ) : (
                <button type="button" className="small" disabled={autoSync || busy} onClick={() => setConfirm(e)} aria-label={`Roll back to #${e.id}`}>
                  Rollback
                </button>
              )
            ) : null}
          </li>
        ))}
      </ol>
      <ErrorLine error={error} />
    </Dialog>
  )
}

/** took is how long a deployment ran, in words. */
function took(from: string, to: string): string {
  const s = Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000))
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`
}
