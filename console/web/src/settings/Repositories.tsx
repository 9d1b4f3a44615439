import { useState, type FormEvent } from 'react'
import { useMutation, useQuery } from 'urql'
import type { RepositoryInput } from '../gql/graphql'
import { useCan } from '../permissions'
import { ErrorLine } from '../ui/Alert'
import { ConfirmButton } from '../ui/ConfirmButton'
import { errorText } from '../ui/errors'
import { ExternalLink } from '../ui/ExternalLink'
import { Check, Field, FormButtons } from '../ui/form'
import { optional } from '../ui/input'
import { clockTime } from '../ui/format'
import {
  CreateRepositoryMutation,
  DeleteRepositoryMutation,
  RepositoriesQuery,
  RepositoryConnectionsQuery,
  RepositoryRightsQuery,
  TestRepositoryMutation,
} from './documents'
import { mergeWrites, noWrites, refetchSoon, withRemoved, withSaved, type Writes } from './writes'

type Repo = { url: string; name: string; type: string; project: string; hasCredentials: boolean; template: boolean }
/** What tells one declaration from another: the server keeps a project's and the global one of a URL apart. */
type RepoIdentity = Pick<Repo, 'url' | 'project' | 'template'>
type Status = { ok: boolean; text: string }
type ConnectionState = { status: string; message: string; attemptedAt: string }
type Rule = { resource: string; action: string; object: string; effect: string }

/** connectionStatus words a server-side connection test for the page. */
export function connectionStatus(c: ConnectionState): Status {
  const when = clockTime(c.attemptedAt)
  return c.status === 'SUCCESSFUL'
    ? { ok: true, text: `Connection successful (tested ${when})` }
    : { ok: false, text: `Connection failed (tested ${when}): ${c.message}` }
}

/**
 * connectionStatuses words the server's connection tests, keyed by
 * repoKey: a project's declaration of a URL and the global one are
 * reached with their own credentials, so one's outcome is not the other's.
 */
export function connectionStatuses(nodes: readonly (RepoIdentity & { connectionState?: ConnectionState | null })[]): Record<string, Status> {
  const out: Record<string, Status> = {}
  for (const n of nodes) {
    if (n.connectionState) out[repoKey(n)] = connectionStatus(n.connectionState)
  }
  return out
}

/**
 * createObjects lists the RBAC objects to ask me.can about before offering
 * "Add": any object ('*') and the object of each of the caller's rules that
 * may allow creating a repository, so a role allowed only `team/*` sees the
 * button too. The server still decides each save.
 */
export function createObjects(rules: readonly Rule[]): string[] {
  const out = new Set(['*'])
  for (const r of rules) {
    if (r.effect === 'allow' && globMatch(r.resource, 'repositories') && globMatch(r.action, 'create')) out.add(r.object)
  }
  return [...out]
}

/** globMatch matches value against an RBAC pattern, where * stands for any run of characters. */
function globMatch(pattern: string, value: string): boolean {
  const re = pattern
    .split('*')
    .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*')
  return new RegExp(`^${re}$`).test(value)
}

/**
 * RepositoriesPage lists repositories (or, with templates, credential
 * templates) and declares, tests and removes them. Credentials are
 * write-only: the form never shows stored ones.
 */
export function RepositoriesPage({ templates }: { templates: boolean }) {
  const [list, refetch] = useQuery({ query: RepositoriesQuery })
  const [connections] = useQuery({ query: RepositoryConnectionsQuery, pause: templates })
  const [rights] = useQuery({ query: RepositoryRightsQuery })
  const [, remove] = useMutation(DeleteRepositoryMutation)
  const [testing, test] = useMutation(TestRepositoryMutation)
  const [editing, setEditing] = useState<Repo | 'new' | null>(null)
  // Outcomes of the tests run from this page (a save tests first; "Test
  // connection" asks the server to test the stored credentials); they
  // replace what the connection query said.
  const [status, setStatus] = useState<Record<string, Status>>({})
  const serverStatus = connectionStatuses(connections.data?.repositories.nodes ?? [])
  const [error, setError] = useState<string | null>(null)
  const [written, setWritten] = useState<Writes<Repo>>(noWrites)
  const canCreate = useCan('repositories', 'create')
  const canDelete = useCan('repositories', 'delete')
  const mayAdd = createObjects(rights.data?.me.permissions ?? []).some((o) => canCreate(o) === true)
  const repos = mergeWrites(list.data?.repositories.nodes ?? [], written, repoKey).filter((r) => r.template === templates)
  const noun = templates ? 'credential template' : 'repository'

  async function doTest(r: Repo) {
    setError(null)
    const res = await test({ url: r.url, project: r.project || null })
    if (res.error) setError(errorText(`Testing ${r.url} failed`, res.error))
    else if (res.data) {
      const st = connectionStatus(res.data.testRepository)
      setStatus((s) => ({ ...s, [repoKey(r)]: st }))
    }
  }

  async function doRemove(r: Repo) {
    setError(null)
    const res = await remove({ url: r.url, template: r.template, project: r.project || null })
    if (res.error) setError(errorText(`Removing ${r.url} failed`, res.error))
    else {
      setWritten((w) => withRemoved(w, repoKey(r), repoKey))
      refetchSoon(refetch)
    }
  }

  return (
    <section className="settings-page" aria-labelledby="repos-title">
      <h1 id="repos-title">{templates ? 'Repository credential templates' : 'Repositories'}</h1>
      {templates ? <p className="k">Credentials used for every repository whose URL starts with the template's URL.</p> : null}
      {mayAdd ? (
        <p>
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            Add {noun}
          </button>
        </p>
      ) : null}
      {editing ? (
        <RepoForm
          template={templates}
          existing={editing === 'new' ? null : editing}
          onSaved={(repo, tested) => {
            setEditing(null)
            if (tested) setStatus((s) => ({ ...s, [repoKey(repo)]: { ok: true, text: `Connection successful (tested ${clockTime()})` } }))
            setWritten((w) => withSaved(w, repo, repoKey))
            refetchSoon(refetch)
          }}
          onFailed={(repo, text) => setStatus((s) => ({ ...s, [repoKey(repo)]: { ok: false, text } }))}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      <ErrorLine error={list.error ? errorText('Loading failed', list.error) : error} />
      {list.data && repos.length === 0 ? <p className="empty">No {noun} yet.</p> : null}
      <ul className="cards" aria-label={templates ? 'Credential templates' : 'Repositories'}>
        {repos.map((r) => {
          const st = status[repoKey(r)] ?? serverStatus[repoKey(r)]
          return (
            <li key={repoKey(r)} className="card-row" data-url={r.url}>
              <div className="card-main">
                <strong className="ellipsis">
                  <ExternalLink url={r.url} />
                </strong>
                <span className="k">
                  {r.type}
                  {r.name ? ` · ${r.name}` : ''}
                  {r.project ? ` · project ${r.project}` : ''} · {r.hasCredentials ? 'with credentials' : 'no credentials'}
                </span>
                {!templates ? (
                  <span className={st ? (st.ok ? 'conn ok' : 'conn bad') : 'conn'} data-connection={st ? (st.ok ? 'ok' : 'failed') : 'unknown'}>
                    {st ? st.text : connections.fetching ? 'Checking the connection…' : 'Connection not tested'}
                  </span>
                ) : null}
              </div>
              <div className="card-buttons">
                {!templates ? (
                  <button type="button" className="small" disabled={testing.fetching} onClick={() => void doTest(r)}>
                    Test connection
                  </button>
                ) : null}
                {canCreate(repoObject(r)) ? (
                  <button type="button" className="small" onClick={() => setEditing(r)}>
                    Edit…
                  </button>
                ) : null}
                {canDelete(repoObject(r)) ? <ConfirmButton label="Remove" confirm={`Remove ${r.url}?`} onConfirm={() => void doRemove(r)} /> : null}
              </div>
            </li>
          )
        })}
      </ul>
    </section>
  )
}

/**
 * repoKey tells repositories apart: a template may share a repository's
 * URL, and so may a project's own declaration.
 */
export function repoKey(r: RepoIdentity): string {
  return `${r.url} ${r.template ? 'template' : 'repo'}${r.project ? ` ${r.project}` : ''}`
}

/** repoObject is a repository's RBAC object: `<project>/<url>` for a project's own. */
export function repoObject(r: RepoIdentity): string {
  return r.project ? `${r.project}/${r.url}` : r.url
}


interface FormState {
  url: string
  type: string
  name: string
  project: string
  username: string
  password: string
  sshPrivateKey: string
  tlsClientCertData: string
  tlsClientCertKey: string
  insecure: boolean
  enableOCI: boolean
  skipTest: boolean
}

/** repositoryInput turns the form into createRepository's input: empty fields are left out. */
export function repositoryInput(f: FormState, template: boolean, upsert: boolean): RepositoryInput {
  return {
    url: f.url.trim(),
    type: optional(f.type),
    name: optional(f.name),
    project: optional(f.project),
    username: optional(f.username),
    // Secrets are sent as typed: leading spaces may be part of them.
    password: f.password === '' ? undefined : f.password,
    sshPrivateKey: f.sshPrivateKey === '' ? undefined : f.sshPrivateKey,
    tlsClientCertData: f.tlsClientCertData === '' ? undefined : f.tlsClientCertData,
    tlsClientCertKey: f.tlsClientCertKey === '' ? undefined : f.tlsClientCertKey,
    insecure: f.insecure,
    enableOCI: f.enableOCI,
    template,
    upsert,
    skipTest: template || f.skipTest,
  }
}

function RepoForm(props: {
  template: boolean
  existing: Repo | null
  onSaved: (repo: Repo, tested: boolean) => void
  onFailed: (repo: RepoIdentity, text: string) => void
  onCancel: () => void
}) {
  const e = props.existing
  const [f, setF] = useState<FormState>({
    url: e?.url ?? '',
    type: e?.type ?? 'git',
    name: e?.name ?? '',
    project: e?.project ?? '',
    username: '',
    password: '',
    sshPrivateKey: '',
    tlsClientCertData: '',
    tlsClientCertKey: '',
    insecure: false,
    enableOCI: false,
    skipTest: false,
  })
  const [error, setError] = useState<string | null>(null)
  const [state, create] = useMutation(CreateRepositoryMutation)
  const set = (c: Partial<FormState>) => setF((x) => ({ ...x, ...c }))
  const text = (key: 'url' | 'name' | 'project' | 'username', label: string, placeholder = '') => (
    <Field label={label}>
      <input
        name={key}
        value={f[key]}
        placeholder={placeholder}
        // The URL and the project are the declaration's identity: another
        // project would be a second declaration, not this one changed.
        disabled={(key === 'url' || key === 'project') && e !== null}
        onChange={(ev) => set({ [key]: ev.target.value })}
      />
    </Field>
  )
  const secret = (key: 'password' | 'sshPrivateKey' | 'tlsClientCertData' | 'tlsClientCertKey', label: string, multiline: boolean) => (
    <Field label={label}>
      {multiline ? (
        <textarea name={key} rows={3} value={f[key]} autoComplete="off" spellCheck={false} onChange={(ev) => set({ [key]: ev.target.value })} />
      ) : (
        <input name={key} type="password" value={f[key]} autoComplete="new-password" onChange={(ev) => set({ [key]: ev.target.value })} />
      )}
    </Field>
  )

  const untested = props.template || f.skipTest

  async function submit(ev: FormEvent) {
    ev.preventDefault()
    setError(null)
    const input = repositoryInput(f, props.template, e !== null)
    const res = await create({ input })
    if (res.error) {
      const msg = errorText(`Saving ${input.url} failed`, res.error)
      setError(msg)
      props.onFailed({ url: input.url, project: input.project ?? '', template: props.template }, msg)
      return
    }
    if (res.data) props.onSaved(res.data.createRepository, !input.skipTest)
  }

  return (
    <form className="settings-form" onSubmit={(ev) => void submit(ev)} aria-label={e ? `Edit ${e.url}` : 'New repository'}>
      <div className="field-row">
        {text('url', props.template ? 'URL prefix' : 'Repository URL', 'https://github.com/org/repo.git')}
        <Field label="Type">
          <select name="type" value={f.type} onChange={(ev) => set({ type: ev.target.value })}>
            <option value="git">git</option>
            <option value="helm">helm</option>
          </select>
        </Field>
        {text('name', 'Name', f.type === 'helm' ? 'needed for Helm' : 'optional')}
        {text('project', 'Project', 'any project')}
      </div>
      <fieldset>
        <legend>Credentials (write-only: stored ones are never shown; leave empty for none)</legend>
        <div className="field-row">
          {text('username', 'Username')}
          {secret('password', 'Password or token', false)}
        </div>
        {secret('sshPrivateKey', 'SSH private key (PEM)', true)}
        <div className="field-row">
          {secret('tlsClientCertData', 'TLS client certificate (PEM)', true)}
          {secret('tlsClientCertKey', 'TLS client key (PEM)', true)}
        </div>
        <Check label="Skip TLS verification" checked={f.insecure} onChange={(insecure) => set({ insecure })} />
        {f.type === 'helm' ? <Check label="OCI registry" checked={f.enableOCI} onChange={(enableOCI) => set({ enableOCI })} /> : null}
        {!props.template ? <Check label="Save without testing the connection" checked={f.skipTest} onChange={(skipTest) => set({ skipTest })} /> : null}
      </fieldset>
      {e ? <p className="k">Saving replaces the declaration: stored credentials not entered again are dropped.</p> : null}
      <ErrorLine error={error} />
      <FormButtons
        submit={untested ? 'Save' : 'Test connection and save'}
        busy={state.fetching && (untested ? 'Saving…' : 'Testing…')}
        onCancel={props.onCancel}
      />
    </form>
  )
}
