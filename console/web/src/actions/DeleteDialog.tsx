import { useState, type FormEvent } from 'react'
import { useMutation } from 'urql'
import type { DeleteApplicationInput } from '../gql/graphql'
import { navigate } from '../router'
import { ErrorLine } from '../ui/Alert'
import { Dialog } from '../ui/Dialog'
import { errorText } from '../ui/errors'
import { Check, Field, FormButtons } from '../ui/form'
import { DeleteMutation } from './documents'

type Cascade = 'foreground' | 'background' | 'none'

const choices: { value: Cascade; label: string; hint: string }[] = [
  { value: 'foreground', label: 'Foreground', hint: 'the application goes once its resources and their dependents are gone' },
  { value: 'background', label: 'Background', hint: 'the application goes once its resources are deleted; dependents go later' },
  { value: 'none', label: 'Non-cascading', hint: 'the resources stay in the cluster' },
]

/** deleteInput maps the cascade choice onto deleteApplication's input. */
export function deleteInput(app: { name: string; namespace: string }, cascade: Cascade): DeleteApplicationInput {
  return {
    application: { name: app.name, namespace: app.namespace },
    cascade: cascade !== 'none',
    propagationPolicy: cascade === 'background' ? 'BACKGROUND' : 'FOREGROUND',
  }
}

/** DeleteDialog deletes the application once its name is typed, then goes to the list. */
export function DeleteDialog({ app, onClose }: { app: { name: string; namespace: string }; onClose: () => void }) {
  const [cascade, setCascade] = useState<Cascade>('foreground')
  const [typed, setTyped] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [state, del] = useMutation(DeleteMutation)

  async function submit(e: FormEvent) {
    e.preventDefault()
    if (typed !== app.name) return
    const res = await del({ input: deleteInput(app, cascade) })
    if (res.error) {
      setError(errorText(`Deleting ${app.name} failed`, res.error))
      return
    }
    onClose()
    navigate('/applications')
  }

  return (
    <Dialog title={`Delete ${app.name}`} onClose={onClose}>
      <form onSubmit={(e) => void submit(e)} className="delete-form">
        <fieldset>
          <legend>What happens to its resources</legend>
          {choices.map((c) => (
            <Check key={c.value} type="radio" name="cascade" value={c.value} label={c.label} hint={`— ${c.hint}`} checked={cascade === c.value} onChange={() => setCascade(c.value)} />
          ))}
        </fieldset>
        <Field label={`Type the application's name, ${app.name}, to confirm`}>
          <input name="confirm-name" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" autoFocus />
        </Field>
        <ErrorLine error={error} />
        <FormButtons submit="Delete" danger busy={state.fetching && 'Deleting…'} disabled={typed !== app.name} onCancel={onClose} />
      </form>
    </Dialog>
  )
}
