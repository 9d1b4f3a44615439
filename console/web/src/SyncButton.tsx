import { useState, useSyncExternalStore } from 'react'
import { useMutation } from 'urql'
import { operationRunning } from './actions/progress'
import { SyncApplicationMutation } from './documents'
import { appObject, type Permissions } from './permissions'
import type { AppRow } from './rows'
import { errorMessage } from './ui/errors'

interface Props {
  app: AppRow
  /** the server's namespace; null while unknown, and then no button shows */
  serverNamespace: string | null
  permissions: Permissions
  onError: (message: string) => void
}

/** SyncButton requests a sync of app; it shows only when me.can says the caller may. */
export function SyncButton({ app, serverNamespace, permissions, onError }: Props) {
  const object = serverNamespace === null ? null : appObject(app, serverNamespace)
  const allowed = useSyncExternalStore(permissions.subscribe, () => (object === null ? false : permissions.get(object)))
  const [state, sync] = useMutation(SyncApplicationMutation)
  const [requested, setRequested] = useState(false)
  if (allowed !== true) return null
  const running = operationRunning(app.status.operationState?.phase)
  return (
    <button
      type="button"
      className="small"
      disabled={state.fetching || running}
      aria-label={`Sync ${app.name}`}
      onClick={() => {
        setRequested(true)
        void sync({ name: app.name, namespace: app.namespace }).then((res) => {
          if (res.error) onError(`Sync of ${app.name} was refused: ${errorMessage(res.error)}`)
        })
      }}
    >
      {state.fetching ? 'Syncing…' : requested && running ? 'Syncing…' : 'Sync'}
    </button>
  )
}
