import { useState, type FormEvent } from 'react'
import { useMutation, useQuery } from 'urql'
import { ErrorLine } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { Field } from '../ui/form'
import { UpdatePasswordMutation, UserInfoQuery } from './documents'

/** UserInfoPage shows who the caller is, what they may do, and changes their password. */
export function UserInfoPage() {
  const [res] = useQuery({ query: UserInfoQuery, requestPolicy: 'network-only' })
  const me = res.data?.me
  return (
    <section className="settings-page" aria-labelledby="user-title">
      <h1 id="user-title">User info</h1>
      <ErrorLine error={res.error ? errorText('Loading failed', res.error) : null} />
      {me ? (
        <>
          <dl className="facts">
            <dt>Username</dt>
            <dd data-field="username">{me.username}</dd>
            <dt>Groups</dt>
            <dd>{me.groups.length ? me.groups.join(', ') : 'none'}</dd>
            {me.email ? (
              <>
                <dt>Email</dt>
                <dd>{me.email}</dd>
              </>
            ) : null}
          </dl>
          <h2>Effective permissions</h2>
          <p className="k">The rules that give or take your rights, through every role you inherit. A deny wins over any allow.</p>
          {me.permissions.length === 0 ? <p className="empty">None.</p> : null}
          <div className="perm-table" role="table" aria-label="Permissions">
            <div role="row" className="perm-row th">
              <span role="columnheader">Subject</span>
              <span role="columnheader">Resource</span>
              <span role="columnheader">Action</span>
              <span role="columnheader">Object</span>
              <span role="columnheader">Effect</span>
            </div>
            {me.permissions.map((p, i) => (
              <div role="row" className="perm-row" key={`${i}:${p.subject}:${p.resource}:${p.action}:${p.object}`}>
                <span role="cell">{p.subject}</span>
                <span role="cell">{p.resource}</span>
                <span role="cell">{p.action}</span>
                <span role="cell">{p.object}</span>
                <span role="cell" className={p.effect === 'deny' ? 'tone-bad' : 'tone-ok'}>
                  {p.effect}
                </span>
              </div>
            ))}
          </div>
          {me.loggedIn && !me.email ? <PasswordForm /> : null}
        </>
      ) : null}
    </section>
  )
}

function PasswordForm() {
  const [f, setF] = useState({ current: '', next: '', again: '' })
  const [error, setError] = useState<string | null>(null)
  const [done, setDone] = useState(false)
  const [state, update] = useMutation(UpdatePasswordMutation)
  async function submit(e: FormEvent) {
    e.preventDefault()
    setError(null)
    if (f.next !== f.again) return setError('The new passwords differ.')
    if (new TextEncoder().encode(f.next).length < 8 || new TextEncoder().encode(f.next).length > 72) return setError('The new password must be 8 to 72 bytes long.')
    const r = await update({ input: { currentPassword: f.current, newPassword: f.next } })
    if (r.error) setError(errorText('Changing the password failed', r.error))
    else {
      setDone(true)
      setF({ current: '', next: '', again: '' })
    }
  }
  return (
    <form className="settings-form narrow" onSubmit={(e) => void submit(e)} aria-labelledby="password-title">
      <h2 id="password-title">Change password</h2>
      <Field label="Current password">
        <input type="password" autoComplete="current-password" value={f.current} onChange={(e) => setF({ ...f, current: e.target.value })} />
      </Field>
      <Field label="New password">
        <input type="password" autoComplete="new-password" value={f.next} onChange={(e) => setF({ ...f, next: e.target.value })} />
      </Field>
      <Field label="New password again">
        <input type="password" autoComplete="new-password" value={f.again} onChange={(e) => setF({ ...f, again: e.target.value })} />
      </Field>
      <ErrorLine error={error} />
      {done ? <p role="status">Password changed. Every session of yours has ended: log in again with the new password.</p> : null}
      <p>
        <button type="submit" className="primary" disabled={state.fetching || !f.current || !f.next}>
          Change password
        </button>
      </p>
    </form>
  )
}
