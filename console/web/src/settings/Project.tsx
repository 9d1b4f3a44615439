import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react'
import { useMutation, useQuery } from 'urql'
import type { TokenFragment } from '../gql/graphql'
import { useCan } from '../permissions'
import { navigate } from '../router'
import { ErrorLine, Loading } from '../ui/Alert'
import { ConfirmButton } from '../ui/ConfirmButton'
import { errorText } from '../ui/errors'
import { Check, Field } from '../ui/form'
import { DeepLinks } from '../ui/DeepLinks'
import { Link } from '../ui/Link'
import { CreateProjectTokenMutation, DeleteProjectMutation, DeleteProjectTokenMutation, ProjectQuery, UpdateProjectSpecMutation } from './documents'
import { InlineForm, RemovableList, StringList } from './lists'
import { addRole, addTo, listOf, newerThan, removeAt, specOf, specText, syncWindow, withRole, type Spec, type WindowForm } from './projectspec'
import { TokenList } from './Tokens'

type Obj = Record<string, unknown>
const s = (v: unknown) => (typeof v === 'string' ? v : '')

/**
 * ProjectPage shows one project and edits it: each change sends the whole
 * spec as it reads in the project's YAML, with that one change.
 */
export function ProjectPage({ name }: { name: string }) {
  const [res, refetch] = useQuery({ query: ProjectQuery, variables: { name } })
  const [saveState, update] = useMutation(UpdateProjectSpecMutation)
  const [, del] = useMutation(DeleteProjectMutation)
  const [error, setError] = useState<string | null>(null)
  const canUpdate = useCan('projects', 'update')(name) === true
  const canDelete = useCan('projects', 'delete')(name) === true
  const project = res.data?.project
  // The server answers queries from its cache, which may not hold this
  // page's last write yet: until the project shows it, the page asks
  // again, and shows a saved spec as the save returned it.
  const [pending, setPending] = useState<{ shows: (yaml: string) => boolean; yaml?: string } | null>(null)
  const caughtUp = pending === null || (project != null && pending.shows(project.yaml))
  useEffect(() => {
    if (pending === null) return
    if (caughtUp) {
      setPending(null)
      return
    }
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 300)
    return () => clearInterval(t)
  }, [pending, caughtUp, refetch])
  const shownYaml = caughtUp ? project?.yaml : (pending?.yaml ?? project?.yaml)
  const spec = useMemo(() => (shownYaml ? specOf(shownYaml) : null), [shownYaml])

  async function save(next: Spec | { error: string }) {
    if ('error' in next && typeof next.error === 'string') {
      setError(next.error)
      return false
    }
    setError(null)
    const r = await update({ input: { name, spec: specText(next as Spec) } })
    if (r.error) {
      setError(errorText(`Saving project ${name} failed`, r.error))
      return false
    }
    const saved = r.data?.updateProjectSpec.yaml
    if (saved) setPending({ yaml: saved, shows: (y) => newerThan(y, saved, true) })
    refetch({ requestPolicy: 'network-only' })
    return true
  }

  async function remove() {
    const r = await del({ name })
    if (r.error) setError(errorText(`Deleting project ${name} failed`, r.error))
    else navigate('/settings/projects')
  }

  if (res.error) return <ErrorLine error={errorText(`Loading project ${name} failed`, res.error)} />
  if (res.data && !project) return <p className="empty">No project {name}.</p>
  if (!spec || !project) return <Loading />
  const list = (key: string) => listOf(spec, key)
  const strings = (key: string, label: string, placeholder: string) => (
    <StringList
      label={label}
      items={list(key).map(String)}
      placeholder={placeholder}
      editable={canUpdate}
      onAdd={(v) => void save(addTo(spec, key, v))}
      onRemove={(i) => void save(removeAt(spec, key, i))}
    />
  )
  return (
    <section className="settings-page project" aria-labelledby="project-title">
      <p className="crumbs">
        <Link to="/settings/projects">Projects</Link> /
      </p>
      <div className="page-head">
        <h1 id="project-title">{name}</h1>
        {canDelete ? <ConfirmButton label="Delete project" confirm={`Delete project ${name}? Refused while applications use it.`} onConfirm={() => void remove()} /> : null}
      </div>
      {s(spec.description) ? <p>{s(spec.description)}</p> : null}
      <DeepLinks links={project.links} label={`Links of project ${name}`} />
      <p aria-live="polite" className="k">
        {saveState.fetching ? 'Saving…' : ''}
      </p>
      <ErrorLine error={error} />
      <Part title="Source repositories">{strings('sourceRepos', 'source repository', 'https://github.com/org/* (globs; ! negates)')}</Part>
      <Part title="Destinations">
        <Destinations items={list('destinations') as Obj[]} editable={canUpdate} onAdd={(d) => void save(addTo(spec, 'destinations', d))} onRemove={(i) => void save(removeAt(spec, 'destinations', i))} />
      </Part>
      <Part title="Source namespaces">{strings('sourceNamespaces', 'source namespace', 'namespace where Applications may use the project')}</Part>
      <Part title="Cluster resources allowed">
        <GroupKinds items={list('clusterResourceWhitelist') as Obj[]} editable={canUpdate} onAdd={(g) => void save(addTo(spec, 'clusterResourceWhitelist', g))} onRemove={(i) => void save(removeAt(spec, 'clusterResourceWhitelist', i))} />
      </Part>
      <Part title="Cluster resources denied">
        <GroupKinds items={list('clusterResourceBlacklist') as Obj[]} editable={canUpdate} onAdd={(g) => void save(addTo(spec, 'clusterResourceBlacklist', g))} onRemove={(i) => void save(removeAt(spec, 'clusterResourceBlacklist', i))} />
      </Part>
      <Part title="Namespace resources allowed (all when empty)">
        <GroupKinds items={list('namespaceResourceWhitelist') as Obj[]} editable={canUpdate} onAdd={(g) => void save(addTo(spec, 'namespaceResourceWhitelist', g))} onRemove={(i) => void save(removeAt(spec, 'namespaceResourceWhitelist', i))} />
      </Part>
      <Part title="Namespace resources denied">
        <GroupKinds items={list('namespaceResourceBlacklist') as Obj[]} editable={canUpdate} onAdd={(g) => void save(addTo(spec, 'namespaceResourceBlacklist', g))} onRemove={(i) => void save(removeAt(spec, 'namespaceResourceBlacklist', i))} />
      </Part>
      <Part title="Roles">
        <Roles project={name} spec={spec} editable={canUpdate} save={save} tokens={project.spec.roles} onTokensChanged={() => {
            const before = project.yaml
            setPending({ shows: (y) => newerThan(y, before) })
            refetch({ requestPolicy: 'network-only' })
          }} />
      </Part>
      <Part title="Sync windows">
        <Windows items={list('syncWindows') as Obj[]} editable={canUpdate} onAdd={(w) => save(addTo(spec, 'syncWindows', w))} onRemove={(i) => void save(removeAt(spec, 'syncWindows', i))} />
      </Part>
    </section>
  )
}

function Part({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="part" aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  )
}

function Destinations({ items, editable, onAdd, onRemove }: { items: Obj[]; editable: boolean; onAdd: (d: Obj) => void; onRemove: (i: number) => void }) {
  const [d, setD] = useState({ server: '', name: '', namespace: '' })
  function add(e: FormEvent) {
    e.preventDefault()
    const out: Obj = {}
    if (d.server.trim()) out.server = d.server.trim()
    if (d.name.trim()) out.name = d.name.trim()
    if (d.namespace.trim()) out.namespace = d.namespace.trim()
    if (!out.server && !out.name) return
    onAdd(out)
    setD({ server: '', name: '', namespace: '' })
  }
  const labels = items.map((x) => `${s(x.name) || s(x.server)} / ${s(x.namespace) || '(any namespace)'}`)
  return (
    <RemovableList labels={labels} editable={editable} onRemove={onRemove} onAdd={add} empty="None: applications may deploy nowhere.">
      <input aria-label="Destination server" placeholder="server URL or *" value={d.server} onChange={(e) => setD({ ...d, server: e.target.value })} />
      <input aria-label="Destination cluster name" placeholder="or cluster name" value={d.name} onChange={(e) => setD({ ...d, name: e.target.value })} />
      <input aria-label="Destination namespace" placeholder="namespace or *" value={d.namespace} onChange={(e) => setD({ ...d, namespace: e.target.value })} />
    </RemovableList>
  )
}

function GroupKinds({ items, editable, onAdd, onRemove }: { items: Obj[]; editable: boolean; onAdd: (g: Obj) => void; onRemove: (i: number) => void }) {
  const [g, setG] = useState({ group: '', kind: '' })
  function add(e: FormEvent) {
    e.preventDefault()
    if (!g.kind.trim()) return
    onAdd({ group: g.group.trim(), kind: g.kind.trim() })
    setG({ group: '', kind: '' })
  }
  const labels = items.map((x) => `${s(x.group) || '(core)'} / ${s(x.kind)}`)
  return (
    <RemovableList labels={labels} editable={editable} onRemove={onRemove} onAdd={add}>
      <input aria-label="API group" placeholder="group (empty for core, * for any)" value={g.group} onChange={(e) => setG({ ...g, group: e.target.value })} />
      <input aria-label="Kind" placeholder="kind or *" value={g.kind} onChange={(e) => setG({ ...g, kind: e.target.value })} />
    </RemovableList>
  )
}

function Roles(props: { project: string; spec: Spec; editable: boolean; save: (next: Spec | { error: string }) => Promise<boolean>; tokens: readonly { name: string; jwtTokens: readonly TokenFragment[] }[]; onTokensChanged: () => void }) {
  const { spec, editable, save } = props
  const [role, setRole] = useState({ name: '', description: '' })
  const roles = listOf<Obj>(spec, 'roles')
  async function add(e: FormEvent) {
    e.preventDefault()
    if (await save(addRole(spec, role.name.trim(), role.description.trim()))) setRole({ name: '', description: '' })
  }
  return (
    <div className="roles">
      {roles.length === 0 ? <p className="empty">No role.</p> : null}
      {roles.map((r, i) => {
        const name = s(r.name)
        return (
          <article key={name} className="role" data-role={name} aria-label={`Role ${name}`}>
            <div className="page-head">
              <h3>{name}</h3>
              {s(r.description) ? <span className="k">{s(r.description)}</span> : null}
              {editable ? <ConfirmButton label="Delete role" confirm={`Delete role ${name} and revoke its tokens?`} onConfirm={() => void save(removeAt(spec, 'roles', i))} /> : null}
            </div>
            <h4>Policies</h4>
            <StringList
              label={`policy of ${name}`}
              items={listOf(r, 'policies').map(String)}
              placeholder={`p, proj:${props.project}:${name}, applications, get, ${props.project}/*, allow`}
              editable={editable}
              onAdd={(v) => void save(withRole(spec, name, (x) => addTo(x, 'policies', v)))}
              onRemove={(j) => void save(withRole(spec, name, (x) => removeAt(x, 'policies', j)))}
            />
            <h4>Groups</h4>
            <StringList
              label={`group of ${name}`}
              items={listOf(r, 'groups').map(String)}
              placeholder="SSO group"
              editable={editable}
              onAdd={(v) => void save(withRole(spec, name, (x) => addTo(x, 'groups', v)))}
              onRemove={(j) => void save(withRole(spec, name, (x) => removeAt(x, 'groups', j)))}
            />
            <h4>Tokens</h4>
            <RoleTokens project={props.project} role={name} tokens={props.tokens.find((t) => t.name === name)?.jwtTokens ?? []} editable={editable} onChanged={props.onTokensChanged} />
          </article>
        )
      })}
      {editable ? (
        <InlineForm label="New role" submit="Add role" onSubmit={(e) => void add(e)}>
          <input aria-label="Role name" placeholder="role name" value={role.name} onChange={(e) => setRole({ ...role, name: e.target.value })} />
          <input aria-label="Role description" placeholder="description" value={role.description} onChange={(e) => setRole({ ...role, description: e.target.value })} />
        </InlineForm>
      ) : null}
    </div>
  )
}

function RoleTokens(props: { project: string; role: string; tokens: readonly TokenFragment[]; editable: boolean; onChanged: () => void }) {
  const [, create] = useMutation(CreateProjectTokenMutation)
  const [, revoke] = useMutation(DeleteProjectTokenMutation)
  const { project, role } = props
  return (
    <TokenList
      tokens={props.tokens}
      editable={props.editable}
      empty="No token."
      removeLabel="Revoke"
      formLabel={`New token for ${role}`}
      expiresPlaceholder="expires in, e.g. 720h (never when empty)"
      issue={async (id, expiresIn) => {
        const r = await create({ input: { project, role, id, expiresIn } })
        return r.error ? errorText('Creating the token failed', r.error) : (r.data?.createProjectToken ?? 'Creating the token failed.')
      }}
      remove={async (id) => {
        const r = await revoke({ project, role, id })
        return r.error ? errorText(`Revoking token ${id} failed`, r.error) : null
      }}
      onChanged={props.onChanged}
    />
  )
}

const emptyWindow: WindowForm = { kind: 'allow', schedule: '', duration: '', applications: '*', namespaces: '', clusters: '', manualSync: false, timeZone: '' }

function Windows({ items, editable, onAdd, onRemove }: { items: Obj[]; editable: boolean; onAdd: (w: Obj | { error: string }) => Promise<boolean>; onRemove: (i: number) => void }) {
  const [w, setW] = useState<WindowForm>(emptyWindow)
  async function add(e: FormEvent) {
    e.preventDefault()
    if (await onAdd(syncWindow(w))) setW(emptyWindow)
  }
  const text = (key: 'schedule' | 'duration' | 'applications' | 'namespaces' | 'clusters' | 'timeZone', label: string, placeholder: string) => (
    <Field label={label}>
      <input value={w[key]} placeholder={placeholder} onChange={(e) => setW({ ...w, [key]: e.target.value })} />
    </Field>
  )
  return (
    <div className="string-list">
      {items.length === 0 ? <p className="empty">No sync window: syncs may run any time.</p> : null}
      <ul>
        {items.map((x, i) => {
          const label = `${s(x.kind)} ${s(x.schedule)} for ${s(x.duration)}`
          const scope = [listOf(x, 'applications').join(', '), listOf(x, 'namespaces').join(', '), listOf(x, 'clusters').join(', ')].filter(Boolean).join(' · ')
          return (
            <li key={`${i}:${label}`}>
              <code>{label}</code>
              <span className="k">
                {scope}
                {x.manualSync ? ' · manual syncs allowed' : ''}
                {s(x.timeZone) ? ` · ${s(x.timeZone)}` : ''}
              </span>
              {editable ? <ConfirmButton label="Remove" confirm={`Remove window ${label}?`} onConfirm={() => onRemove(i)} /> : null}
            </li>
          )
        })}
      </ul>
      {editable ? (
        <form className="settings-form" onSubmit={(e) => void add(e)} aria-label="New sync window">
          <div className="field-row">
            <Field label="Kind">
              <select value={w.kind} onChange={(e) => setW({ ...w, kind: e.target.value as WindowForm['kind'] })}>
                <option value="allow">allow</option>
                <option value="deny">deny</option>
              </select>
            </Field>
            {text('schedule', 'Schedule (cron)', '0 22 * * *')}
            {text('duration', 'Duration', '1h')}
            {text('timeZone', 'Time zone', 'UTC')}
          </div>
          <div className="field-row">
            {text('applications', 'Applications', 'globs, comma-separated')}
            {text('namespaces', 'Namespaces', 'globs, comma-separated')}
            {text('clusters', 'Clusters', 'globs, comma-separated')}
          </div>
          <Check label="Allow manual syncs while it denies" checked={w.manualSync} onChange={(manualSync) => setW({ ...w, manualSync })} />
          <p>
            <button type="submit" className="small">
              Add window
            </button>
          </p>
        </form>
      ) : null}
    </div>
  )
}
