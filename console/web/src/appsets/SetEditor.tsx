import { useState, type FormEvent } from 'react'
import { useClient, useMutation } from 'urql'
import { fromYaml, specYaml } from '../actions/appform'
import { YamlEditor } from '../editor'
import type { DryRunApplicationSetQuery } from '../gql/graphql'
import { ErrorList } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { FormButtons } from '../ui/form'
import { destinationText, sourceText } from '../ui/format'
import { CreateSetMutation, DryRunSetQuery, UpdateSetMutation } from './documents'
import { previewName } from './view'
import './appsets.css'

type Preview = DryRunApplicationSetQuery['dryRunApplicationSet']

interface Props {
  /** create a new set, or replace the spec of the one named set */
  mode: 'create' | 'edit'
  /** the manifest the editor starts with, as YAML */
  initial: string
  /** the set being edited */
  set?: { name: string; namespace: string }
  /** called with the created set, or null after an edit */
  onDone: (created: { name: string; namespace: string } | null) => void
  onCancel: () => void
}

/**
 * SetEditor edits an ApplicationSet as YAML. Preview generates its
 * Applications on the server without writing anything (dryRunApplicationSet)
 * and lists them, with each element that fails and why; Save creates the
 * set, or replaces the edited set's spec.
 */
export function SetEditor({ mode, initial, set, onDone, onCancel }: Props) {
  const client = useClient()
  const [text, setText] = useState(initial)
  const [problems, setProblems] = useState<string[]>([])
  const [preview, setPreview] = useState<Preview | null>(null)
  const [previewing, setPreviewing] = useState(false)
  const [createState, create] = useMutation(CreateSetMutation)
  const [updateState, update] = useMutation(UpdateSetMutation)

  async function runPreview() {
    setProblems([])
    setPreview(null)
    setPreviewing(true)
    const res = await client.query(DryRunSetQuery, { manifest: text }, { requestPolicy: 'network-only' }).toPromise()
    setPreviewing(false)
    if (res.error) setProblems([errorText('The preview failed', res.error)])
    else setPreview(res.data?.dryRunApplicationSet ?? null)
  }

  async function save(e?: FormEvent) {
    e?.preventDefault()
    const parsed = fromYaml(text, 'ApplicationSet')
    if ('error' in parsed) {
      setProblems([parsed.error])
      return
    }
    setProblems([])
    if (mode === 'create') {
      const res = await create({ manifest: text })
      const created = res.data?.createApplicationSet
      if (res.error || !created) setProblems([res.error ? errorText('Creating the ApplicationSet failed', res.error) : 'Creating the ApplicationSet failed.'])
      else onDone(created)
    } else if (set) {
      const res = await update({ name: set.name, namespace: set.namespace, spec: specYaml(parsed.manifest) })
      if (res.error) setProblems([errorText(`Saving ${set.name} failed`, res.error)])
      else onDone(null)
    }
  }

  const busy = createState.fetching || updateState.fetching
  return (
    <form className="set-editor" onSubmit={(e) => void save(e)}>
      {mode === 'edit' ? <p className="k">Only the spec is saved; the name and metadata stay as they are.</p> : null}
      <YamlEditor
        value={text}
        onChange={(t) => {
          setText(t)
          setPreview(null) // it showed the text as it was
        }}
        label="ApplicationSet manifest"
        height="24rem"
        onSave={() => void save()}
      />
      <ErrorList problems={problems} />
      {preview ? <PreviewList preview={preview} /> : null}
      <FormButtons
        submit={mode === 'create' ? 'Create' : 'Save'}
        busy={busy && 'Saving…'}
        onCancel={onCancel}
        before={
          <button type="button" disabled={previewing} onClick={() => void runPreview()}>
            {previewing ? 'Generating…' : 'Preview'}
          </button>
        }
      />
    </form>
  )
}

/** PreviewList shows what a set would generate: each Application, or why its element fails. */
function PreviewList({ preview }: { preview: Preview }) {
  const made = preview.totalCount - preview.failedCount
  return (
    <section className="set-part set-preview" aria-label="Preview">
      <h2>Preview</h2>
      <p role="status">
        {made} {made === 1 ? 'Application' : 'Applications'} would be generated
        {preview.failedCount > 0 ? `; ${preview.failedCount} ${preview.failedCount === 1 ? 'element fails' : 'elements fail'}` : ''}.
        {preview.elements.length < preview.totalCount ? ` The first ${preview.elements.length} are shown.` : ''}
      </p>
      {preview.elements.length === 0 ? <p className="empty">The generators produced nothing.</p> : null}
      <ul className="set-apps">
        {preview.elements.map((e, i) => {
          const app = e.application
          return (
            <li key={i} className={e.error ? 'set-line failed' : 'set-line'} data-preview={previewName(e)}>
              <strong>{previewName(e)}</strong>
              {app ? (
                <span className="k">
                  project {app.project} · {destinationText(app.spec.destination)} · {sourceText(app.spec)}
                </span>
              ) : null}
              {e.error ? <span>{e.error}</span> : null}
            </li>
          )
        })}
      </ul>
    </section>
  )
}
