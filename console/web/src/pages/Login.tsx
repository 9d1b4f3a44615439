import { useState, type FormEvent } from 'react'
import { login } from '../client'
import { safeReturnPath } from '../router'
import { ErrorLine } from '../ui/Alert'

interface Props {
  ssoProviders: string[]
  banner: string
}

export function LoginPage({ ssoProviders, banner }: Props) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const returnTo = safeReturnPath(new URLSearchParams(window.location.search).get('return'))

  async function submit(e: FormEvent) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    const err = await login(username, password)
    setBusy(false)
    if (err !== null) {
      setError(err)
      return
    }
    // A full load: what was answered before the login (me, settings, the
    // socket) belongs to the anonymous caller.
    window.location.assign(returnTo)
  }

  return (
    <main className="login">
      <form className="card" onSubmit={(e) => void submit(e)} aria-labelledby="login-title">
        <h1 id="login-title">Log in to graphcd</h1>
        {banner ? <p className="banner">{banner}</p> : null}
        <label>
          Username
          <input name="username" autoComplete="username" required autoFocus value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <ErrorLine error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        {ssoProviders.length > 0 ? (
          <>
            <p className="or">or</p>
            <a className="button" href={`/auth/login?return_url=${encodeURIComponent(returnTo)}`}>
              Log in via SSO ({ssoProviders.join(', ')})
            </a>
          </>
        ) : null}
      </form>
    </main>
  )
}
