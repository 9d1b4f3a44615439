import { useState, type FormEvent } from 'react'
import { useMutation } from 'urql'
import type { ActionsAppFragment } from '../gql/graphql'
import { ErrorList } from '../ui/Alert'
import { Dialog } from '../ui/Dialog'
import { errorText } from '../ui/errors'
import { Check, Field, FormButtons } from '../ui/form'
import { SyncMutation } from './documents'
import { SYNC_OPTIONS, buildSyncInput, initialSyncForm, resourceId, type RetryForm, type SyncForm } from './syncform'

/** SyncDialog asks how to sync app, then requests the sync; onStarted follows the operation. */
export function SyncDialog({ app, onClose, onStarted }: { app: ActionsAppFragment; onClose: () => void; onStarted: () => void }) {
  const policy = app.spec.syncPolicy
  const [form, setForm] = useState<SyncForm>(() => initialSyncForm({ syncOptions: policy?.syncOptions ?? [], retry: policy?.retry }))
  const [problems, setProblems] = useState<string[]>([])
  const [state, sync] = useMutation(SyncMutation)
  // Hooks run by themselves; the selectable resources are the others.
  const resources = app.status.resources.filter((r) => !r.hook)
  const set = (change: Partial<SyncForm>) => setForm((f) => ({ ...f, ...change }))

  async function submit(e: FormEvent) {
    e.preventDefault()
    const built = buildSyncInput(app, form, resources)
    if ('errors' in built) {
      setProblems(built.errors)
      return
    }
    setProblems([])
    const res = await sync({ input: built.input })
    if (res.error) {
      setProblems([errorText(`Sync of ${app.name} was refused`, res.error)])
      return
    }
    onStarted()
    onClose()
  }

  return (
    <Dialog title={`Sync ${app.name}`} onClose={onClose} wide>
      <form className="sync-form" onSubmit={(e) => void submit(e)}>
        <Field label="Revision">
          <input
            name="revision"
            value={form.revision}
            placeholder={app.spec.source?.targetRevision || 'HEAD'}
            onChange={(e) => set({ revision: e.target.value })}
            autoFocus
          />
        </Field>
        <fieldset className="checks">
          <legend>Sync</legend>
          <Check label="Prune" hint="(delete resources no longer in Git)" checked={form.prune} onChange={(prune) => set({ prune })} />
          <Check label="Dry run" hint="(preview, change nothing)" checked={form.dryRun} onChange={(dryRun) => set({ dryRun })} />
          <Check label="Force" hint="(delete and re-create what cannot be patched)" checked={form.force} onChange={(force) => set({ force })} />
          <Check label="Apply only" hint="(skip hooks)" checked={form.applyOnly} onChange={(applyOnly) => set({ applyOnly })} />
        </fieldset>
        <fieldset className="checks columns">
          <legend>Sync options</legend>
          {SYNC_OPTIONS.map((o) => (
            <Check
              key={o.option}
              label={o.label}
              hint={`(${o.option})`}
              checked={form.options.has(o.option)}
              onChange={(on) => {
                const options = new Set(form.options)
                if (on) options.add(o.option)
                else options.delete(o.option)
                set({ options })
              }}
            />
          ))}
        </fieldset>
        <ResourceChoice form={form} set={set} resources={resources} />
        <RetryFields retry={form.retry} onChange={(retry) => set({ retry })} />
        <ErrorList problems={problems} />
        <FormButtons submit={form.dryRun ? 'Preview sync' : 'Synchronize'} busy={state.fetching && 'Requesting…'} onCancel={onClose} />
      </form>
    </Dialog>
  )
}

type Resource = ActionsAppFragment['status']['resources'][number]

function ResourceChoice({ form, set, resources }: { form: SyncForm; set: (c: Partial<SyncForm>) => void; resources: Resource[] }) {
  const toggle = (id: string, on: boolean) => {
    const selected = new Set(form.selected)
    if (on) selected.add(id)
    else selected.delete(id)
    set({ selected })
  }
  return (
    <fieldset className="resources">
      <legend>Resources</legend>
      <Check type="radio" name="scope" label={`All ${resources.length} resources`} checked={form.all} onChange={() => set({ all: true })} />
      <Check type="radio" name="scope" label="Only those checked below" checked={!form.all} onChange={() => set({ all: false })} />
      {!form.all ? (
        <>
          <p className="row-buttons">
            <button type="button" className="small" onClick={() => set({ selected: new Set(resources.map(resourceId)) })}>
              Check all
            </button>
            <button type="button" className="small" onClick={() => set({ selected: new Set(resources.filter((r) => r.status === 'OutOfSync').map(resourceId)) })}>
              Check out of sync
            </button>
            <button type="button" className="small" onClick={() => set({ selected: new Set() })}>
              Check none
            </button>
          </p>
          <ul className="resource-list">
            {resources.map((r) => {
              const id = resourceId(r)
              return (
                <li key={id}>
                  <Check
                    label={`${r.kind}/${r.name}`}
                    hint={`${r.namespace ? `in ${r.namespace} · ` : ''}${r.status}${r.requiresPruning ? ' · to prune' : ''}${r.syncWave !== 0 ? ` · wave ${r.syncWave}` : ''}`}
                    checked={form.selected.has(id)}
                    onChange={(on) => toggle(id, on)}
                  />
                </li>
              )
            })}
          </ul>
        </>
      ) : null}
    </fieldset>
  )
}

function RetryFields({ retry, onChange }: { retry: RetryForm; onChange: (r: RetryForm) => void }) {
  const field = (label: string, key: keyof Omit<RetryForm, 'enabled'>, hint: string) => (
    <Field label={label}>
      <input name={`retry-${key}`} value={retry[key]} placeholder={hint} onChange={(e) => onChange({ ...retry, [key]: e.target.value })} />
    </Field>
  )
  return (
    <fieldset className="retry">
      <legend>Retry</legend>
      <Check label="Retry a failed sync" checked={retry.enabled} onChange={(enabled) => onChange({ ...retry, enabled })} />
      {retry.enabled ? (
        <div className="field-row">
          {field('Limit', 'limit', '2')}
          {field('Backoff duration', 'duration', '5s')}
          {field('Backoff factor', 'factor', '2')}
          {field('Maximum backoff', 'maxDuration', '3m')}
        </div>
      ) : null}
    </fieldset>
  )
}
