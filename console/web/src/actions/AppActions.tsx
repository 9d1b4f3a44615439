import { useState } from 'react'
import { useMutation, useQuery, useSubscription } from 'urql'
import { ErrorLine } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { DeleteDialog } from './DeleteDialog'
import { ActionsAppSubscription, AppPermissionsQuery, RefreshMutation, TerminateMutation } from './documents'
import { EditDialog } from './EditDialog'
import { HistoryPanel } from './HistoryPanel'
import { OperationProgress, PendingOperation } from './OperationProgress'
import { operationRunning } from './progress'
import { SyncDialog } from './SyncDialog'
import './actions.css'

type Panel = 'sync' | 'history' | 'edit' | 'delete' | null

/**
 * AppActions is the application page's action bar: sync, refresh,
 * terminate, history and rollback, edit, delete. It follows the application
 * live, so the operation's progress shows as the controller records it.
 * Controls the caller may not use are left out.
 */
export function AppActions({ name, namespace }: { name: string; namespace?: string }) {
  const variables = { name, namespace }
  const [sub] = useSubscription({ query: ActionsAppSubscription, variables })
  const [perms] = useQuery({ query: AppPermissionsQuery, variables })
  const [refreshState, refresh] = useMutation(RefreshMutation)
  const [terminateState, terminate] = useMutation(TerminateMutation)
  const [panel, setPanel] = useState<Panel>(null)
  const [showOp, setShowOp] = useState(false)
  // The start and end of the operation recorded when a new one was
  // requested: while the recorded one is still that one, the new one has
  // not started.
  const [requestedOver, setRequestedOver] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [notice, setNotice] = useState<string | null>(null)
  const app = sub.data?.application
  const can = perms.data?.application
  if (!app) {
    return sub.error ? <ErrorLine error={errorText(`Following ${name} failed`, sub.error)} /> : null
  }
  const ref = { name: app.name, namespace: app.namespace }
  const op = app.status.operationState
  const opRunning = operationRunning(op?.phase)
  const running = opRunning || app.operation != null
  // An operation requested but not yet started: the state recorded is
  // still the previous operation's, which must not pass for the new one,
  // even before the subscription shows the request.
  const recorded = op ? `${op.startedAt} ${op.finishedAt ?? ''}` : ''
  const pending = !opRunning && (app.operation != null || requestedOver === recorded)
  const started = () => {
    setError(null)
    setNotice(null)
    setShowOp(true)
    setRequestedOver(recorded)
  }

  async function doRefresh(hard: boolean) {
    setError(null)
    setNotice(null)
    const res = await refresh({ input: { application: ref, hard } })
    if (res.error) setError(errorText(`${hard ? 'Hard refresh' : 'Refresh'} of ${app?.name} was refused`, res.error))
    else setNotice(hard ? 'Hard refresh requested: the manifests are rendered again and compared.' : 'Refresh requested: the application is compared with Git again.')
  }

  async function doTerminate() {
    setError(null)
    const res = await terminate({ input: ref })
    if (res.error) setError(errorText(`Terminating the operation of ${app?.name} failed`, res.error))
  }

  return (
    <div className="app-actions">
      {/* Busy until the permissions are known: controls may still appear. */}
      <div className="action-bar" role="toolbar" aria-label={`Actions on ${app.name}`} aria-busy={!can}>
        {can?.sync ? (
          <button type="button" className="primary" disabled={running || app.deleting} onClick={() => setPanel('sync')}>
            Sync…
          </button>
        ) : null}
        <button type="button" disabled={refreshState.fetching} onClick={() => void doRefresh(false)}>
          Refresh
        </button>
        <button type="button" disabled={refreshState.fetching} onClick={() => void doRefresh(true)} title="Render the manifests again rather than reuse cached ones">
          Hard refresh
        </button>
        {can?.sync && running ? (
          <button type="button" className="danger" disabled={terminateState.fetching || op?.phase === 'Terminating'} onClick={() => void doTerminate()}>
            {op?.phase === 'Terminating' ? 'Terminating…' : 'Terminate'}
          </button>
        ) : null}
        <button type="button" onClick={() => setPanel('history')}>
          History ({app.status.history.length})
        </button>
        {can?.update ? (
          <button type="button" disabled={app.deleting} onClick={() => setPanel('edit')}>
            Edit…
          </button>
        ) : null}
        {can?.delete ? (
          <button type="button" className="danger" disabled={app.deleting} onClick={() => setPanel('delete')}>
            Delete…
          </button>
        ) : null}
        {op && !running ? (
          <button type="button" aria-expanded={showOp} onClick={() => setShowOp(!showOp)}>
            {showOp ? 'Hide last operation' : 'Last operation'}
          </button>
        ) : null}
      </div>
      <p className="notice" role="status">
        {notice}
      </p>
      <ErrorLine error={error} onDismiss={() => setError(null)} />
      {/* A running operation always shows; a finished one on request. */}
      {pending ? (
        <PendingOperation by={app.operation?.initiatedBy.username ?? ''} />
      ) : op && (showOp || running) ? (
        <OperationProgress op={op} syncStatus={app.status.sync.status} />
      ) : null}
      {panel === 'sync' ? <SyncDialog app={app} onClose={() => setPanel(null)} onStarted={started} /> : null}
      {panel === 'history' ? <HistoryPanel app={app} canSync={can?.sync === true} onClose={() => setPanel(null)} onStarted={started} /> : null}
      {panel === 'edit' ? <EditDialog app={ref} onClose={() => setPanel(null)} /> : null}
      {panel === 'delete' ? <DeleteDialog app={ref} onClose={() => setPanel(null)} /> : null}
    </div>
  )
}
