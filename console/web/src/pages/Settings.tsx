import { decodeSegment } from '../router'
import { AccountsPage } from '../settings/Accounts'
import { ClustersPage } from '../settings/Clusters'
import { ProjectPage } from '../settings/Project'
import { ProjectsPage } from '../settings/Projects'
import { RepositoriesPage } from '../settings/Repositories'
import { UserInfoPage } from '../settings/UserInfo'
import { Link } from '../ui/Link'
import '../settings/settings.css'

const sections = [
  { path: '/settings/repositories', title: 'Repositories', about: 'Git and Helm repositories, with connection tests' },
  { path: '/settings/repocreds', title: 'Repository credential templates', about: 'credentials for every repository under a URL prefix' },
  { path: '/settings/clusters', title: 'Clusters', about: 'destination clusters' },
  { path: '/settings/projects', title: 'Projects', about: 'destinations, source repositories, roles, tokens and sync windows' },
  { path: '/settings/accounts', title: 'Accounts', about: 'local accounts and their API tokens' },
  { path: '/settings/user', title: 'User info', about: 'who you are, your permissions, your password' },
]

/** SettingsPage routes /settings/... to repositories, credentials, clusters, projects, accounts and user info. */
export function SettingsPage({ path }: { path: string }) {
  const p = path.replace(/\/+$/, '')
  const project = /^\/settings\/projects\/([^/]+)$/.exec(p)?.[1]
  let page
  if (project !== undefined) page = <ProjectPage name={decodeSegment(project) ?? project} />
  else if (p === '/settings/repositories') page = <RepositoriesPage templates={false} />
  else if (p === '/settings/repocreds') page = <RepositoriesPage templates />
  else if (p === '/settings/clusters') page = <ClustersPage />
  else if (p === '/settings/projects') page = <ProjectsPage />
  else if (p === '/settings/accounts') page = <AccountsPage />
  else if (p === '/settings/user') page = <UserInfoPage />
  else if (p === '/settings') page = <SettingsIndex />
  else page = <p className="empty">No such settings page.</p>
  return (
    <div className="settings">
      <nav className="settings-nav" aria-label="Settings">
        <Link to="/settings">Settings</Link>
        {sections.map((s) => (
          <span key={s.path} aria-current={p.startsWith(s.path) ? 'page' : undefined}>
            <Link to={s.path}>{s.title}</Link>
          </span>
        ))}
      </nav>
      {page}
    </div>
  )
}

function SettingsIndex() {
  return (
    <section className="settings-page" aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <ul className="cards">
        {sections.map((s) => (
          <li key={s.path} className="card-row">
            <div className="card-main">
              <strong>
                <Link to={s.path}>{s.title}</Link>
              </strong>
              <span className="k">{s.about}</span>
            </div>
          </li>
        ))}
      </ul>
    </section>
  )
}
