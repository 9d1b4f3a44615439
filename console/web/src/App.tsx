import { useEffect } from 'react'
import { useQuery } from 'urql'
import { NEW_APP_PATH, NewApplicationPage } from './actions/NewApplication'
import { NEW_SET_PATH, NewApplicationSetPage } from './appsets/NewApplicationSet'
import { logout } from './client'
import { SessionQuery } from './documents'
import { ApplicationPage } from './pages/Application'
import { ApplicationSetPage } from './pages/ApplicationSet'
import { ApplicationSetsPage } from './pages/ApplicationSets'
import { ApplicationsPage } from './pages/Applications'
import { AuditPage } from './pages/Audit'
import { INSIGHTS_PATH, InsightsPage } from './pages/Insights'
import { LoginPage } from './pages/Login'
import { SettingsPage } from './pages/Settings'
import { SETS_PATH, appRef, navigate, setRef, useLocation } from './router'
import { safeHref } from './safeurl'
import { THEME_CHOICES, useTheme, type ThemeChoice } from './theme'
import { Link } from './ui/Link'

export function App() {
  const { path } = useLocation()
  const app = appRef(path)
  const set = setRef(path)
  const [session] = useQuery({ query: SessionQuery })
  const me = session.data?.me
  const settings = session.data?.settings
  const [theme, setTheme] = useTheme()
  const bannerHref = safeHref(settings?.uiBannerURL)

  useEffect(() => {
    if (path === '/' || path === '') navigate('/applications', { replace: true })
  }, [path])

  if (path === '/login') {
    return <LoginPage ssoProviders={settings?.ssoProviders ?? []} banner={settings?.uiBannerContent ?? ''} />
  }

  return (
    <div className="shell">
      <header className="topbar">
        <Link className="brand" to="/applications">
          graphcd
        </Link>
        {settings?.uiBannerContent ? (
          <p className="banner">
            {bannerHref ? (
              <a href={bannerHref} target="_blank" rel="noreferrer noopener">
                {settings.uiBannerContent}
              </a>
            ) : (
              settings.uiBannerContent
            )}
          </p>
        ) : null}
        <Link to={NEW_APP_PATH}>New application</Link>
        <Link to={SETS_PATH}>ApplicationSets</Link>
        <Link to={INSIGHTS_PATH}>Insights</Link>
        <Link to="/settings">Settings</Link>
        {me?.loggedIn ? <Link to="/audit">Audit</Link> : null}
        <span className="spacer" />
        <label className="theme-choice">
          <span className="visually-hidden">Theme</span>
          <select aria-label="Theme" value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)}>
            {THEME_CHOICES.map((c) => (
              <option key={c} value={c}>
                {c === 'system' ? 'System theme' : c === 'light' ? 'Light' : 'Dark'}
              </option>
            ))}
          </select>
        </label>
        {me?.loggedIn ? (
          <>
            <span className="user" title={me.groups.join(', ')}>{me.username}</span>
            <button type="button" onClick={() => void logout()}>Log out</button>
          </>
        ) : me ? (
          <a className="button" href="/login">Log in</a>
        ) : null}
      </header>
      <main>
        {app !== null ? (
          <ApplicationPage name={app.name} namespace={app.namespace} />
        ) : path === '/applications' ? (
          <ApplicationsPage />
        ) : path === NEW_APP_PATH ? (
          <NewApplicationPage />
        ) : set !== null ? (
          <ApplicationSetPage name={set.name} namespace={set.namespace} />
        ) : path === SETS_PATH ? (
          <ApplicationSetsPage />
        ) : path === NEW_SET_PATH ? (
          <NewApplicationSetPage />
        ) : path === INSIGHTS_PATH ? (
          <InsightsPage />
        ) : path === '/audit' ? (
          <AuditPage />
        ) : path === '/settings' || path.startsWith('/settings/') ? (
          <SettingsPage path={path} />
        ) : (
          <p className="empty">
            Nothing here. <a href="/applications">Go to the applications.</a>
          </p>
        )}
      </main>
    </div>
  )
}
