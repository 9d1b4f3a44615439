import { useState, type FormEvent } from 'react'
import { useMutation, useQuery } from 'urql'
import { errorText } from '../actions/errors'
import { AccountsQuery, CreateAccountTokenMutation, DeleteAccountTokenMutation } from './documents'
import { ConfirmButton, ErrorLine, TokenOnce } from './ui'

/** AccountsPage lists the local accounts the caller may see, with their API tokens. */
export function AccountsPage() {
  const [list, refetch] = useQuery({ query: AccountsQuery })
  const reload = () => refetch({ requestPolicy: 'network-only' })
  return (
    <section className="settings-page" aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      <ErrorLine error={list.error ? errorText('Loading failed', list.error) : null} />
      <ul className="cards" aria-label="Accounts">
        {(list.data?.accounts ?? []).map((a) => (
          <li key={a.name} className="card-col" data-account={a.name}>
            <div className="card-main">
              <strong>{a.name}</strong>
              <span className="k">
                {a.enabled ? 'enabled' : 'disabled'} · {a.capabilities.join(', ') || 'no capability'}
                {a.passwordChangedAt ? ` · password changed ${new Date(a.passwordChangedAt).toLocaleString()}` : ''}
              </span>
            </div>
            {a.capabilities.includes('apiKey') ? <AccountTokens account={a.name} tokens={a.tokens} onChanged={reload} /> : null}
          </li>
        ))}
      </ul>
    </section>
  )
}

function AccountTokens(props: { account: string; tokens: { id: string; issuedAt: string; expiresAt?: string | null }[]; onChanged: () => void }) {
  const [form, setForm] = useState({ id: '', expiresIn: '' })
  const [issued, setIssued] = useState<{ id: string; token: string; expiresAt?: string | null } | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [state, create] = useMutation(CreateAccountTokenMutation)
  const [, del] = useMutation(DeleteAccountTokenMutation)
  async function submit(e: FormEvent) {
    e.preventDefault()
    setError(null)
    const r = await create({ input: { account: props.account, id: form.id.trim() || undefined, expiresIn: form.expiresIn.trim() || undefined } })
    if (r.error || !r.data) {
      setError(r.error ? errorText(`Creating a token for ${props.account} failed`, r.error) : 'Creating the token failed.')
      return
    }
    setIssued(r.data.createAccountToken)
    setForm({ id: '', expiresIn: '' })
    props.onChanged()
  }
  async function remove(id: string) {
    setError(null)
    const r = await del({ account: props.account, id })
    if (r.error) setError(errorText(`Deleting token ${id} failed`, r.error))
    else props.onChanged()
  }
  return (
    <div className="string-list">
      {issued ? <TokenOnce token={issued} onDone={() => setIssued(null)} /> : null}
      {props.tokens.length === 0 ? <p className="empty">No API token.</p> : null}
      <ul>
        {props.tokens.map((t) => (
          <li key={t.id}>
            <code>{t.id}</code>
            <span className="k">
              issued {new Date(t.issuedAt).toLocaleString()}, {t.expiresAt ? `expires ${new Date(t.expiresAt).toLocaleString()}` : 'never expires'}
            </span>
            <ConfirmButton label="Delete" confirm={`Delete token ${t.id}?`} onConfirm={() => void remove(t.id)} />
          </li>
        ))}
      </ul>
      <form className="inline-form" onSubmit={(e) => void submit(e)} aria-label={`New token for ${props.account}`}>
        <input aria-label="Token ID" placeholder="ID (random when empty)" value={form.id} onChange={(e) => setForm({ ...form, id: e.target.value })} />
        <input aria-label="Expires in" placeholder="expires in, e.g. 720h" value={form.expiresIn} onChange={(e) => setForm({ ...form, expiresIn: e.target.value })} />
        <button type="submit" className="small" disabled={state.fetching}>
          Create token
        </button>
      </form>
      <ErrorLine error={error} />
    </div>
  )
}
