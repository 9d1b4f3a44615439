// The Parameters tab: for each source of the application, what it passes
// to its renderer, editable by those who may update the application. A
// save sends the whole spec through updateApplicationSpec with only that
// source's options changed.
import { useMemo, useState, type ReactNode } from 'react'
import { useMutation, useQuery } from 'urql'
import { parse, stringify } from 'yaml'
import { newerThan } from '../settings/projectspec'
import { ErrorLine, ErrorList, Loading } from '../ui/Alert'
import { errorMessage, errorText } from '../ui/errors'
import { Check, Field } from '../ui/form'
import { ParametersQuery, SaveParametersMutation } from './documents'
import { paramProblems, paramsOf, sourcesOf, sourceType, withParams, type NameValue, type SourceParams } from './params'

function specOf(yaml: string): Record<string, unknown> | null {
  try {
    const m = parse(yaml) as unknown
    const spec = m && typeof m === 'object' ? (m as Record<string, unknown>).spec : null
    return spec && typeof spec === 'object' ? (spec as Record<string, unknown>) : null
  } catch {
    return null
  }
}

export function Parameters({ name, namespace }: { name: string; namespace: string | null }) {
  const [res, refetch] = useQuery({ query: ParametersQuery, variables: { name, namespace }, requestPolicy: 'network-only' })
  const [, save] = useMutation(SaveParametersMutation)
  const [saved, setSaved] = useState<string | null>(null)
  const a = res.data?.application
  // The server answers from its cache, which may lag behind a save: show
  // what the save returned until the query catches up.
  const yaml = a && saved && !newerThan(a.yaml, saved, true) ? saved : (a?.yaml ?? saved)
  const spec = useMemo(() => (yaml ? specOf(yaml) : null), [yaml])
  if (res.error && !a) return <ErrorLine error={errorMessage(res.error)} />
  if (res.data && !a) return <p className="empty">The application no longer exists.</p>
  if (!a || !yaml) return <Loading what="the parameters" />
  if (!spec) return <ErrorLine error="The application's spec does not parse." />
  const sources = sourcesOf(spec)
  const types = sources.length === 1 && a.status.sourceTypes.length === 0 ? [a.status.sourceType] : a.status.sourceTypes
  return (
    <div className="params">
      {a.update ? null : <p className="k">You may not change this application: the parameters are read-only.</p>}
      {sources.map((s, i) =>
        typeof s.ref === 'string' && s.ref && !s.path && !s.chart ? (
          <p key={i} className="k">
            Source {i + 1} only lends its files to the others as ${s.ref}: it renders nothing.
          </p>
        ) : (
        <SourceForm
          key={i}
          title={sources.length > 1 ? `Source ${i + 1}${typeof s.name === 'string' && s.name ? ` (${s.name})` : ''}: ${String(s.repoURL ?? '')}` : `Source: ${String(s.repoURL ?? '')}`}
          initial={paramsOf(s, sourceType(s, types[i]))}
          editable={a.update === true}
          onSave={async (p) => {
            const r = await save({ input: { application: { name: a.name, namespace: a.namespace }, spec: stringify(withParams(spec, i, p), { lineWidth: 0 }) } })
            if (r.error) return errorText(`Saving the parameters of ${a.name} failed`, r.error)
            const y = r.data?.updateApplicationSpec.yaml
            if (y) setSaved(y)
            refetch({ requestPolicy: 'network-only' })
            return null
          }}
        />
        ),
      )}
    </div>
  )
}

function SourceForm({ title, initial, editable, onSave }: { title: string; initial: SourceParams; editable: boolean; onSave: (p: SourceParams) => Promise<string | null> }) {
  const [p, setP] = useState(initial)
  // A save (or another writer) changes the spec: start again from it.
  const initialKey = JSON.stringify(initial)
  const [shownKey, setShownKey] = useState(initialKey)
  if (shownKey !== initialKey) {
    setShownKey(initialKey)
    setP(initial)
  }
  const [problems, setProblems] = useState<string[]>([])
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')
  const dirty = JSON.stringify(p) !== initialKey
  const ro = !editable

  async function submit() {
    const found = paramProblems(p)
    setProblems(found)
    if (found.length > 0) return
    setBusy(true)
    const err = await onSave(p)
    setBusy(false)
    if (err) setProblems([err])
    else setNotice('Saved: the application is compared with the new parameters.')
  }

  const text = (label: string, value: string, change: (v: string) => void, placeholder?: string) => (
    <Field label={label}>
      <input value={value} readOnly={ro} placeholder={placeholder} onChange={(e) => change(e.target.value)} />
    </Field>
  )
  const lines = (label: string, value: string[], change: (v: string[]) => void, placeholder: string) => (
    <Field label={`${label} (one per line)`}>
      <textarea value={value.join('\n')} readOnly={ro} placeholder={placeholder} rows={Math.max(2, value.length + 1)} onChange={(e) => change(e.target.value.split('\n'))} />
    </Field>
  )
  let body: ReactNode
  if (p.type === 'Helm') {
    const h = p.helm
    const helm = (c: Partial<SourceParams['helm']>) => setP({ ...p, helm: { ...h, ...c } })
    body = (
      <>
        {text('Release name', h.releaseName, (releaseName) => helm({ releaseName }), 'the application name')}
        {lines('Values files', h.valueFiles, (valueFiles) => helm({ valueFiles }), 'values-prod.yaml')}
        <Pairs
          label="Parameters"
          rows={h.parameters}
          editable={editable}
          valueLabel="Value"
          extra={(r, i) => (
            <Check label="string" checked={r.forceString} disabled={ro} onChange={(forceString) => helm({ parameters: h.parameters.map((x, j) => (j === i ? { ...x, forceString } : x)) })} />
          )}
          onChange={(rows) => helm({ parameters: rows.map((r) => ({ forceString: false, ...r })) })}
        />
        <Field label="Values (YAML)">
          <textarea value={h.values} readOnly={ro} spellCheck={false} onChange={(e) => helm({ values: e.target.value })} />
        </Field>
      </>
    )
  } else if (p.type === 'Kustomize') {
    const k = p.kustomize
    const kust = (c: Partial<SourceParams['kustomize']>) => setP({ ...p, kustomize: { ...k, ...c } })
    body = (
      <>
        <div className="field-row">
          {text('Name prefix', k.namePrefix, (namePrefix) => kust({ namePrefix }))}
          {text('Name suffix', k.nameSuffix, (nameSuffix) => kust({ nameSuffix }))}
          {text('Namespace', k.namespace, (namespace) => kust({ namespace }))}
        </div>
        {lines('Images', k.images, (images) => kust({ images }), 'nginx=nginx:1.27')}
        <Pairs label="Replicas" rows={k.replicas} editable={editable} nameLabel="Workload" valueLabel="Count" onChange={(replicas) => kust({ replicas })} />
      </>
    )
  } else if (p.type === 'Directory') {
    const d = p.directory
    const dir = (c: Partial<SourceParams['directory']>) => setP({ ...p, directory: { ...d, ...c } })
    body = (
      <>
        <Check label="Read subdirectories too (recurse)" checked={d.recurse} disabled={ro} onChange={(recurse) => dir({ recurse })} />
        <div className="field-row">
          {text('Include', d.include, (include) => dir({ include }), '*.yaml')}
          {text('Exclude', d.exclude, (exclude) => dir({ exclude }), 'test/*')}
        </div>
      </>
    )
  } else {
    const g = p.plugin
    const plugin = (c: Partial<SourceParams['plugin']>) => setP({ ...p, plugin: { ...g, ...c } })
    body = (
      <>
        {text('Plugin', g.name, (name) => plugin({ name }), 'discovered from the repository')}
        <Pairs label="Environment" rows={g.env} editable={editable} valueLabel="Value" onChange={(env) => plugin({ env })} />
      </>
    )
  }
  return (
    <form
      className="params-source"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
    >
      <fieldset>
        <legend>
          {title} · {p.type}
        </legend>
        {body}
        <ErrorList problems={problems} />
        <p className="k" role="status">
          {dirty ? '' : notice}
        </p>
        {editable ? (
          <div className="row-buttons">
            <button type="submit" className="primary" disabled={!dirty || busy}>
              {busy ? 'Saving…' : 'Save parameters'}
            </button>
            <button type="button" disabled={!dirty || busy} onClick={() => (setP(initial), setProblems([]))}>
              Undo changes
            </button>
          </div>
        ) : null}
      </fieldset>
    </form>
  )
}

// Pairs edits a list of name/value rows (Helm parameters, replicas, env).
function Pairs<T extends NameValue>({
  label,
  rows,
  editable,
  nameLabel = 'Name',
  valueLabel,
  extra,
  onChange,
}: {
  label: string
  rows: T[]
  editable: boolean
  nameLabel?: string
  valueLabel: string
  extra?: (r: T, i: number) => ReactNode
  onChange: (rows: NameValue[] | T[]) => void
}) {
  const edit = (i: number, c: Partial<NameValue>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...c } : r)))
  return (
    <div role="group" aria-label={label}>
      <span className="k">{label}</span>
      {rows.length === 0 ? <p className="empty">None.</p> : null}
      <div className="pairs">
        {rows.map((r, i) => (
          <div key={i} style={{ display: 'contents' }} data-row={r.name}>
            <input aria-label={`${nameLabel} ${i + 1}`} value={r.name} readOnly={!editable} onChange={(e) => edit(i, { name: e.target.value })} />
            <input aria-label={`${valueLabel} of ${r.name || `row ${i + 1}`}`} value={r.value} readOnly={!editable} onChange={(e) => edit(i, { value: e.target.value })} />
            <span>{extra?.(r, i)}</span>
            {editable ? (
              <button type="button" className="small" aria-label={`Remove ${r.name || `row ${i + 1}`}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
                Remove
              </button>
            ) : (
              <span />
            )}
          </div>
        ))}
      </div>
      {editable ? (
        <button type="button" className="small" onClick={() => onChange([...rows, { name: '', value: '' }])}>
          Add {label.toLowerCase().replace(/s$/, '')}
        </button>
      ) : null}
    </div>
  )
}
