import { useId, useState, type FormEvent } from 'react'
import { useMutation, useQuery } from 'urql'
import { YamlEditor } from '../editor'
import { ErrorLine, ErrorList } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { Check, Field, FormButtons } from '../ui/form'
import { createdAppPath, formOf, formProblems, fromYaml, specYaml, toYaml, withForm, type AppForm } from './appform'
import { CreateAppMutation, FormChoicesQuery, UpdateAppSpecMutation } from './documents'
import { SYNC_OPTIONS } from './syncform'
import './actions.css'

type Manifest = Record<string, unknown>

interface Props {
  /** create a new application, or edit the spec of the one the manifest names */
  mode: 'create' | 'edit'
  initial: Manifest
  /** the namespace of the Application object being edited */
  namespace?: string
  /** called with the page to open: the created app's, or null after an edit */
  onDone: (path: string | null) => void
  onCancel: () => void
}

/**
 * AppEditor edits an application as a form or as YAML. Both tabs edit one
 * manifest: a form change rewrites the YAML, and YAML that parses updates
 * the form (fields the form does not show stay as written).
 */
export function AppEditor({ mode, initial, namespace, onDone, onCancel }: Props) {
  const [manifest, setManifest] = useState<Manifest>(initial)
  const [text, setText] = useState(() => toYaml(initial))
  const [yamlError, setYamlError] = useState<string | null>(null)
  const [tab, setTab] = useState<'form' | 'yaml'>('form')
  const [problems, setProblems] = useState<string[]>([])
  const [createState, create] = useMutation(CreateAppMutation)
  const [updateState, update] = useMutation(UpdateAppSpecMutation)
  const form = formOf(manifest)
  const ids = { form: useId(), yaml: useId() }

  function change(c: Partial<AppForm>) {
    const m = withForm(manifest, { ...form, ...c })
    setManifest(m)
    setText(toYaml(m))
    setYamlError(null)
  }

  function editYaml(t: string) {
    setText(t)
    const r = fromYaml(t)
    if ('error' in r) setYamlError(r.error)
    else {
      setManifest(r.manifest)
      setYamlError(null)
    }
  }

  async function submit(e?: FormEvent) {
    e?.preventDefault()
    const found = yamlError ? [yamlError] : formProblems(form)
    setProblems(found)
    if (found.length > 0) return
    if (mode === 'create') {
      const res = await create({ input: { manifest: toYaml(manifest) } })
      if (res.error) setProblems([errorText(`Creating ${form.name} failed`, res.error)])
      else onDone(createdAppPath(manifest, res.data?.createApplication ?? { name: form.name, namespace: '' }))
    } else {
      const res = await update({ input: { application: { name: form.name, namespace }, spec: specYaml(manifest) } })
      if (res.error) setProblems([errorText(`Saving ${form.name} failed`, res.error)])
      else onDone(null)
    }
  }

  const busy = createState.fetching || updateState.fetching
  return (
    <form className="app-editor" onSubmit={(e) => void submit(e)}>
      <div role="tablist" aria-label="Edit as" className="toggle">
        <button type="button" role="tab" id={`${ids.form}-tab`} aria-controls={ids.form} aria-selected={tab === 'form'} onClick={() => setTab('form')}>
          Form
        </button>
        <button type="button" role="tab" id={`${ids.yaml}-tab`} aria-controls={ids.yaml} aria-selected={tab === 'yaml'} onClick={() => setTab('yaml')}>
          YAML
        </button>
      </div>
      {tab === 'form' ? (
        <div role="tabpanel" id={ids.form} aria-labelledby={`${ids.form}-tab`}>
          {yamlError ? <p className="error">The YAML does not parse, so the form shows it as it last did: {yamlError}</p> : null}
          <FormFields form={form} change={change} mode={mode} />
        </div>
      ) : (
        <div role="tabpanel" id={ids.yaml} aria-labelledby={`${ids.yaml}-tab`}>
          {mode === 'edit' ? <p className="k">Only the spec is saved; the name and metadata stay as they are.</p> : null}
          <YamlEditor value={text} onChange={editYaml} label="Application manifest" height="24rem" onSave={() => void submit()} />
          <ErrorLine error={yamlError} />
        </div>
      )}
      <ErrorList problems={problems} />
      <FormButtons submit={mode === 'create' ? 'Create' : 'Save'} busy={busy && 'Saving…'} onCancel={onCancel} />
    </form>
  )
}

function FormFields({ form, change, mode }: { form: AppForm; change: (c: Partial<AppForm>) => void; mode: 'create' | 'edit' }) {
  const [choices] = useQuery({ query: FormChoicesQuery })
  const projects = choices.data?.projects.nodes.map((p) => p.name) ?? []
  const clusters = choices.data?.clusters.nodes ?? []
  const listId = useId()
  const input = (key: 'name' | 'repoURL' | 'path' | 'chart' | 'targetRevision' | 'server' | 'clusterName' | 'namespace', extra: { placeholder?: string; list?: string; disabled?: boolean } = {}) => (
    <input name={key} value={form[key]} onChange={(e) => change({ [key]: e.target.value })} {...extra} />
  )
  return (
    <div className="app-fields">
      <fieldset>
        <legend>Application</legend>
        <div className="field-row">
          <Field label="Name">{input('name', { disabled: mode === 'edit', placeholder: 'guestbook' })}</Field>
          <Field label="Project">
            <select name="project" value={form.project} onChange={(e) => change({ project: e.target.value })}>
              {[...new Set([...projects, form.project])].filter(Boolean).map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </Field>
        </div>
      </fieldset>
      <fieldset>
        <legend>Source</legend>
        <Field label="Repository URL">{input('repoURL', { placeholder: 'https://github.com/org/repo.git' })}</Field>
        <div className="check-row" role="radiogroup" aria-label="Source type">
          <Check type="radio" name="sourceKind" label="Directory in Git" checked={form.sourceKind === 'path'} onChange={() => change({ sourceKind: 'path' })} />
          <Check type="radio" name="sourceKind" label="Helm chart" checked={form.sourceKind === 'chart'} onChange={() => change({ sourceKind: 'chart' })} />
        </div>
        <div className="field-row">
          {form.sourceKind === 'path' ? <Field label="Path">{input('path', { placeholder: 'deploy/prod' })}</Field> : <Field label="Chart">{input('chart')}</Field>}
          <Field label={form.sourceKind === 'chart' ? 'Chart version' : 'Target revision'}>{input('targetRevision', { placeholder: 'HEAD' })}</Field>
        </div>
      </fieldset>
      <fieldset>
        <legend>Destination</legend>
        <div className="check-row" role="radiogroup" aria-label="Cluster by">
          <Check type="radio" name="destinationBy" label="Cluster URL" checked={form.destinationBy === 'server'} onChange={() => change({ destinationBy: 'server' })} />
          <Check type="radio" name="destinationBy" label="Cluster name" checked={form.destinationBy === 'name'} onChange={() => change({ destinationBy: 'name' })} />
        </div>
        <div className="field-row">
          {form.destinationBy === 'server' ? (
            <Field label="Cluster URL">{input('server', { list: `${listId}-servers` })}</Field>
          ) : (
            <Field label="Cluster name">{input('clusterName', { list: `${listId}-names` })}</Field>
          )}
          <Field label="Namespace">{input('namespace')}</Field>
        </div>
        <datalist id={`${listId}-servers`}>
          {clusters.map((c) => (
            <option key={c.id} value={c.server} />
          ))}
        </datalist>
        <datalist id={`${listId}-names`}>
          {clusters.map((c) => (
            <option key={c.id} value={c.name} />
          ))}
        </datalist>
      </fieldset>
      <fieldset>
        <legend>Sync policy</legend>
        <Check label="Automated sync" checked={form.autoSync} onChange={(autoSync) => change({ autoSync })} />
        <Check label="Prune resources no longer in Git" disabled={!form.autoSync} checked={form.prune} onChange={(prune) => change({ prune })} />
        <Check label="Self-heal (revert changes made in the cluster)" disabled={!form.autoSync} checked={form.selfHeal} onChange={(selfHeal) => change({ selfHeal })} />
        <div className="checks columns">
          {SYNC_OPTIONS.map((o) => (
            <Check
              key={o.option}
              label={o.label}
              hint={`(${o.option})`}
              checked={form.syncOptions.includes(o.option)}
              onChange={(on) => change({ syncOptions: on ? [...form.syncOptions, o.option] : form.syncOptions.filter((x) => x !== o.option) })}
            />
          ))}
        </div>
      </fieldset>
    </div>
  )
}
