import { useMemo } from 'react'
import { useQuery } from 'urql'
import { parse } from 'yaml'
import { ErrorLine, Loading } from '../ui/Alert'
import { Dialog } from '../ui/Dialog'
import { errorText } from '../ui/errors'
import { AppEditor } from './AppEditor'
import { editableManifest } from './appform'
import { AppYamlQuery } from './documents'

/** EditDialog edits the application's spec, starting from its manifest as the server has it now. */
export function EditDialog({ app, onClose }: { app: { name: string; namespace: string }; onClose: () => void }) {
  const [res] = useQuery({ query: AppYamlQuery, variables: app, requestPolicy: 'network-only' })
  const yaml = res.data?.application?.yaml
  const initial = useMemo(() => (yaml ? editableManifest(parse(yaml) as Record<string, unknown>) : null), [yaml])
  return (
    <Dialog title={`Edit ${app.name}`} onClose={onClose} wide>
      {res.error ? (
        <ErrorLine error={errorText(`Loading ${app.name} failed`, res.error)} />
      ) : initial ? (
        <AppEditor mode="edit" initial={initial} namespace={app.namespace} onDone={onClose} onCancel={onClose} />
      ) : (
        <Loading />
      )}
    </Dialog>
  )
}
