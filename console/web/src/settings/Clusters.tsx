import { useState, type FormEvent } from 'react'
import { useMutation, useQuery } from 'urql'
import type { ClusterInput } from '../gql/graphql'
import { useCan } from '../permissions'
import { ErrorLine } from '../ui/Alert'
import { ConfirmButton } from '../ui/ConfirmButton'
import { errorText } from '../ui/errors'
import { Check, Field, FormButtons } from '../ui/form'
import { optional, splitList } from '../ui/input'
import { clusterConnection, clusterFigures, type ClusterInfo } from './clusterinfo'
import { ComponentStatus } from './Components'
import { AddClusterMutation, ClustersQuery, RemoveClusterMutation } from './documents'
import { mergeWrites, noWrites, refetchSoon, withRemoved, withSaved, type Writes } from './writes'

type Listed = {
  id: string
  name: string
  server: string
  namespaces: string[]
  clusterResources: boolean
  project: string
  shard?: number | null
  labels: { key: string; value: string }[]
  info?: ClusterInfo | null
}
const serverOf = (c: { server: string }) => c.server

interface FormState {
  name: string
  server: string
  bearerToken: string
  caData: string
  certData: string
  keyData: string
  insecure: boolean
  serverName: string
  namespaces: string
  clusterResources: boolean
  project: string
}

/** clusterInput turns the form into addCluster's input. */
export function clusterInput(f: FormState): ClusterInput {
  const namespaces = splitList(f.namespaces)
  return {
    name: f.name.trim(),
    server: f.server.trim(),
    bearerToken: optional(f.bearerToken),
    caData: optional(f.caData),
    certData: optional(f.certData),
    keyData: optional(f.keyData),
    insecure: f.insecure,
    serverName: optional(f.serverName),
    namespaces: namespaces.length > 0 ? namespaces : undefined,
    clusterResources: f.clusterResources,
    project: optional(f.project),
  }
}

/** ClustersPage lists destination clusters, registers and removes them. */
export function ClustersPage() {
  const [list, refetch] = useQuery({ query: ClustersQuery })
  const [, remove] = useMutation(RemoveClusterMutation)
  const [adding, setAdding] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const canCreate = useCan('clusters', 'create')
  const canDelete = useCan('clusters', 'delete')
  const isAdmin = useCan('clusters', 'update')('*')
  const [written, setWritten] = useState<Writes<Listed>>(noWrites)
  const clusters = mergeWrites(list.data?.clusters.nodes ?? [], written, serverOf)

  async function doRemove(server: string) {
    setError(null)
    const res = await remove({ server })
    if (res.error) setError(errorText(`Removing ${server} failed`, res.error))
    else {
      setWritten((w) => withRemoved(w, server, serverOf))
      refetchSoon(refetch)
    }
  }

  return (
    <section className="settings-page" aria-labelledby="clusters-title">
      <h1 id="clusters-title">Clusters</h1>
      {canCreate('*') ? (
        <p>
          <button type="button" className="primary" onClick={() => setAdding(true)}>
            Add cluster
          </button>
        </p>
      ) : null}
      {adding ? (
        <ClusterForm
          onSaved={(c) => {
            setAdding(false)
            setWritten((w) => withSaved(w, c, serverOf))
            refetchSoon(refetch)
          }}
          onCancel={() => setAdding(false)}
        />
      ) : null}
      <ErrorLine error={list.error ? errorText('Loading failed', list.error) : error} />
      <ul className="cards" aria-label="Clusters">
        {clusters.map((c) => (
          <li key={c.server} className="card-row" data-server={c.server}>
            <div className="card-main">
              <strong className="ellipsis">{c.name || c.server}</strong>
              <span className="k ellipsis">
                {c.server}
                {c.project ? ` · project ${c.project}` : ''}
                {c.namespaces.length ? ` · namespaces ${c.namespaces.join(', ')}${c.clusterResources ? ' + cluster resources' : ''}` : ' · all namespaces'}
                {c.shard != null ? ` · shard ${c.shard}` : ''}
              </span>
              {c.labels.length ? <span className="k">{c.labels.map((l) => `${l.key}=${l.value}`).join(', ')}</span> : null}
              <ClusterState info={c.info} />
            </div>
            <div className="card-buttons">{canDelete(c.server) ? <ConfirmButton label="Remove" confirm={`Unregister ${c.server}?`} onConfirm={() => void doRemove(c.server)} /> : null}</div>
          </li>
        ))}
      </ul>
      {isAdmin ? <ComponentStatus /> : null}
    </section>
  )
}

/** ClusterState shows what the controller last reported of a cluster. */
function ClusterState({ info }: { info?: ClusterInfo | null }) {
  const conn = clusterConnection(info)
  const figures = clusterFigures(info)
  return (
    <span className="k ellipsis">
      <span className={conn.state === 'ok' ? 'conn ok' : conn.state === 'failed' ? 'conn bad' : 'conn'} data-connection={conn.state}>
        {conn.text}
      </span>
      {figures.length ? ` · ${figures.join(' · ')}` : ''}
    </span>
  )
}

function ClusterForm({ onSaved, onCancel }: { onSaved: (c: Listed) => void; onCancel: () => void }) {
  const [f, setF] = useState<FormState>({
    name: '',
    server: '',
    bearerToken: '',
    caData: '',
    certData: '',
    keyData: '',
    insecure: false,
    serverName: '',
    namespaces: '',
    clusterResources: false,
    project: '',
  })
  const [error, setError] = useState<string | null>(null)
  const [state, add] = useMutation(AddClusterMutation)
  const set = (c: Partial<FormState>) => setF((x) => ({ ...x, ...c }))
  const text = (key: 'name' | 'server' | 'serverName' | 'namespaces' | 'project', label: string, placeholder = '') => (
    <Field label={label}>
      <input name={key} value={f[key]} placeholder={placeholder} onChange={(e) => set({ [key]: e.target.value })} />
    </Field>
  )
  const pem = (key: 'caData' | 'certData' | 'keyData', label: string) => (
    <Field label={label}>
      <textarea name={key} rows={3} value={f[key]} spellCheck={false} autoComplete="off" onChange={(e) => set({ [key]: e.target.value })} />
    </Field>
  )

  async function submit(e: FormEvent) {
    e.preventDefault()
    if (!f.name.trim() || !f.server.trim()) {
      setError('Name and server URL are required.')
      return
    }
    const res = await add({ input: clusterInput(f) })
    if (res.error) setError(errorText(`Adding ${f.server} failed`, res.error))
    else if (res.data) onSaved(res.data.addCluster)
  }

  return (
    <form className="settings-form" onSubmit={(e) => void submit(e)} aria-label="New cluster">
      <div className="field-row">
        {text('name', 'Name', 'prod')}
        {text('server', 'Server URL', 'https://10.0.0.1:6443')}
        {text('project', 'Project', 'any project')}
      </div>
      <fieldset>
        <legend>Connection (write-only: never shown again)</legend>
        <Field label="Bearer token">
          <input name="bearerToken" type="password" autoComplete="new-password" value={f.bearerToken} onChange={(e) => set({ bearerToken: e.target.value })} />
        </Field>
        {pem('caData', 'CA certificate (PEM)')}
        <div className="field-row">
          {pem('certData', 'Client certificate (PEM)')}
          {pem('keyData', 'Client key (PEM)')}
        </div>
        <div className="field-row">
          {text('serverName', 'TLS server name')}
          {text('namespaces', 'Only these namespaces', 'comma-separated; all when empty')}
        </div>
        <Check label="Manage cluster-scoped resources too" checked={f.clusterResources} onChange={(clusterResources) => set({ clusterResources })} />
        <Check label="Skip TLS verification" checked={f.insecure} onChange={(insecure) => set({ insecure })} />
      </fieldset>
      <ErrorLine error={error} />
      <FormButtons submit="Add cluster" busy={state.fetching && 'Adding…'} onCancel={onCancel} />
    </form>
  )
}
