import { useState, type FormEvent } from 'react'
import { useMutation, useQuery } from 'urql'
import { useCan } from '../permissions'
import { navigate } from '../router'
import { ErrorLine } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { Field, FormButtons } from '../ui/form'
import { Link } from '../ui/Link'
import { CreateProjectMutation, ProjectListQuery } from './documents'
import { newProjectManifest } from './projectspec'

/** ProjectsPage lists the projects and creates new ones. */
export function ProjectsPage() {
  const [list] = useQuery({ query: ProjectListQuery })
  const canCreate = useCan('projects', 'create')
  const [adding, setAdding] = useState(false)
  return (
    <section className="settings-page" aria-labelledby="projects-title">
      <h1 id="projects-title">Projects</h1>
      {canCreate('*') ? (
        <p>
          <button type="button" className="primary" onClick={() => setAdding(true)}>
            New project
          </button>
        </p>
      ) : null}
      {adding ? <NewProjectForm onCancel={() => setAdding(false)} /> : null}
      <ErrorLine error={list.error ? errorText('Loading failed', list.error) : null} />
      <ul className="cards" aria-label="Projects">
        {(list.data?.projects.nodes ?? []).map((p) => (
          <li key={p.id} className="card-row" data-project={p.name}>
            <div className="card-main">
              <strong>
                <Link to={`/settings/projects/${encodeURIComponent(p.name)}`}>{p.name}</Link>
              </strong>
              {p.spec.description ? <span>{p.spec.description}</span> : null}
              <span className="k ellipsis">
                {p.spec.sourceRepos.length} source {p.spec.sourceRepos.length === 1 ? 'repository' : 'repositories'} · {p.spec.destinations.length}{' '}
                {p.spec.destinations.length === 1 ? 'destination' : 'destinations'} · {p.spec.roles.length} {p.spec.roles.length === 1 ? 'role' : 'roles'}
              </span>
            </div>
          </li>
        ))}
      </ul>
    </section>
  )
}

function NewProjectForm({ onCancel }: { onCancel: () => void }) {
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [state, create] = useMutation(CreateProjectMutation)
  async function submit(e: FormEvent) {
    e.preventDefault()
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
      setError('A project name has lower-case letters, digits and "-", and starts and ends with a letter or digit.')
      return
    }
    const res = await create({ input: { manifest: newProjectManifest(name, description.trim()) } })
    if (res.error) setError(errorText(`Creating project ${name} failed`, res.error))
    else navigate(`/settings/projects/${encodeURIComponent(name)}`)
  }
  return (
    <form className="settings-form" onSubmit={(e) => void submit(e)} aria-label="New project">
      <div className="field-row">
        <Field label="Name">
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Description">
          <input name="description" value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
      </div>
      <p className="k">The project starts open (any repository, any destination); narrow it on its page.</p>
      <ErrorLine error={error} />
      <FormButtons submit="Create project" disabled={state.fetching} onCancel={onCancel} />
    </form>
  )
}
