// The actions menu of one live object: the resource actions it offers
// (restart, scale, suspend, custom ones from graphcd-cm), each enabled
// when the object allows it and the caller holds its RBAC right, run
// through a dialog that asks for the action's parameters.
import { useEffect, useState, type FormEvent } from 'react'
import { useClient, useMutation, useQuery } from 'urql'
import type { AppRef } from '../router'
import { ErrorLine } from '../ui/Alert'
import { Dialog } from '../ui/Dialog'
import { errorText } from '../ui/errors'
import { Field, FormButtons } from '../ui/form'
import { ResourceActionsQuery, RunResourceActionMutation } from './actionDocuments'
import { actionRight, changesText, paramInputs, paramProblem, type ActionParam } from './resourceActions'
import type { ResourceId } from './resourceParam'

interface Action {
  name: string
  disabled: boolean
  displayName: string
  params: ActionParam[]
}

/** useActionRights asks Application.can for the right of each action, in one query. */
function useActionRights(app: AppRef, id: ResourceId, actions: Action[]): Map<string, boolean> {
  const client = useClient()
  const [rights, setRights] = useState(new Map<string, boolean>())
  const names = actions.map((a) => a.name).join('\n')
  useEffect(() => {
    if (names === '') return
    const list = names.split('\n')
    const fields = list.map((n, i) => `c${i}: can(action: ${JSON.stringify(actionRight(id.group, id.kind, n))})`).join(' ')
    let live = true
    void client
      .query(`query ActionRights($app: String!, $ns: String) { application(name: $app, namespace: $ns) { id ${fields} } }`, { app: app.name, ns: app.namespace }, { requestPolicy: 'network-only' })
      .toPromise()
      .then((res) => {
        if (!live) return
        const got = (res.data?.application ?? {}) as Record<string, unknown>
        setRights(new Map(list.map((n, i) => [n, got[`c${i}`] === true])))
      })
    return () => {
      live = false
    }
  }, [client, app.name, app.namespace, id.group, id.kind, names])
  return rights
}

/** ResourceActions is the Actions button of the resource panel and its menu. */
export function ResourceActions({ app, id, version }: { app: AppRef; id: ResourceId; version: number }) {
  const [res, refetch] = useQuery({ query: ResourceActionsQuery, variables: { app: app.name, appNamespace: app.namespace, ...id }, requestPolicy: 'network-only' })
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' })
  }, [version, refetch])
  const actions: Action[] = res.data?.application?.liveResource.actions ?? []
  const rights = useActionRights(app, id, actions)
  const [open, setOpen] = useState(false)
  const [running, setRunning] = useState<Action | null>(null)
  const [outcome, setOutcome] = useState<string | null>(null)
  useEffect(() => {
    setOpen(false)
    setOutcome(null)
  }, [id.group, id.kind, id.namespace, id.name])
  if (actions.length === 0) return null
  return (
    <div className="ractions">
      <button type="button" className="small" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)}>
        Actions ▾
      </button>
      {open ? (
        <ul role="menu" aria-label={`Actions of ${id.kind} ${id.name}`} className="ractions-menu">
          {actions.map((a) => {
            const allowed = rights.get(a.name)
            const why = a.disabled ? 'not possible on the object as it is' : allowed === false ? 'you may not run it' : undefined
            return (
              <li key={a.name} role="none">
                <button
                  type="button"
                  role="menuitem"
                  disabled={a.disabled || allowed !== true}
                  title={why}
                  onClick={() => {
                    setOpen(false)
                    setOutcome(null)
                    setRunning(a)
                  }}
                >
                  {a.displayName || a.name}
                  {why ? <span className="k"> — {why}</span> : null}
                </button>
              </li>
            )
          })}
        </ul>
      ) : null}
      {outcome ? (
        <span role="status" className="ractions-outcome">
          {outcome}
        </span>
      ) : null}
      {running ? (
        <RunDialog
          app={app}
          id={id}
          action={running}
          onClose={() => setRunning(null)}
          onDone={(text) => {
            setRunning(null)
            setOutcome(text)
            refetch({ requestPolicy: 'network-only' })
          }}
        />
      ) : null}
    </div>
  )
}

/** RunDialog asks for an action's parameters (or for a confirmation) and runs it. */
function RunDialog({ app, id, action, onClose, onDone }: { app: AppRef; id: ResourceId; action: Action; onClose: () => void; onDone: (outcome: string) => void }) {
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(action.params.map((p) => [p.name, p.default])))
  const [error, setError] = useState<string | null>(null)
  const [state, run] = useMutation(RunResourceActionMutation)
  const problems = action.params.map((p) => paramProblem(p, values[p.name] ?? '')).filter((p): p is string => p !== null)

  async function submit(e: FormEvent) {
    e.preventDefault()
    if (problems.length > 0) return
    const res = await run({
      input: { application: { name: app.name, namespace: app.namespace }, group: id.group, kind: id.kind, namespace: id.namespace, name: id.name },
      action: action.name,
      params: paramInputs(action.params, values),
    })
    if (res.error) {
      setError(errorText(`Running ${action.name} failed`, res.error))
      return
    }
    onDone(`${action.name} ran: ${changesText(res.data?.runResourceAction ?? [])}`)
  }

  return (
    <Dialog title={`Run ${action.displayName || action.name} on ${id.kind} ${id.name}`} onClose={onClose}>
      <form onSubmit={(e) => void submit(e)} className="ractions-form">
        {action.params.length === 0 ? <p>Run the action {action.name} on {id.kind} {id.name} now?</p> : null}
        {action.params.map((p) => (
          <Field key={p.name} label={`${p.name} (${p.type})`}>
            <input name={p.name} value={values[p.name] ?? ''} onChange={(e) => setValues({ ...values, [p.name]: e.target.value })} autoComplete="off" />
          </Field>
        ))}
        <ErrorLine error={problems[0] ?? error} />
        <FormButtons submit="Run" busy={state.fetching && 'Running…'} disabled={problems.length > 0} onCancel={onClose} />
      </form>
    </Dialog>
  )
}
