// API tokens as the settings pages show them: an account's and a project
// role's alike. A token's value is shown once, when it is issued.
import { useState, type FormEvent } from 'react'
import type { IssuedTokenFragment, TokenFragment } from '../gql/graphql'
import { ErrorLine } from '../ui/Alert'
import { ConfirmButton } from '../ui/ConfirmButton'
import { optional } from '../ui/input'
import { dateTime } from '../ui/format'
import { InlineForm } from './lists'

/** TokenOnce shows a new token, which the server never shows again. */
export function TokenOnce({ token, onDone }: { token: IssuedTokenFragment; onDone: () => void }) {
  const [copied, setCopied] = useState(false)
  return (
    <div className="token-once" role="status">
      <p>
        Token <strong>{token.id}</strong> {token.expiresAt ? `(expires ${dateTime(token.expiresAt)})` : '(never expires)'}. Copy it now: it is not shown again.
      </p>
      <input className="token-value" readOnly value={token.token} aria-label={`New token ${token.id}`} onFocus={(e) => e.currentTarget.select()} />
      <p className="row-buttons">
        <button
          type="button"
          className="small"
          onClick={() =>
            void navigator.clipboard?.writeText(token.token).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="small" onClick={onDone}>
          Done, hide it
        </button>
      </p>
    </div>
  )
}

/**
 * TokenList lists tokens with a button that removes each (Revoke or Delete)
 * and, when editable, a form that issues one. issue answers the new token,
 * or why it was refused; remove answers why it was refused, or null.
 */
export function TokenList(props: {
  tokens: readonly TokenFragment[]
  editable: boolean
  empty: string
  removeLabel: string
  formLabel: string
  expiresPlaceholder: string
  issue: (id: string | undefined, expiresIn: string | undefined) => Promise<IssuedTokenFragment | string>
  remove: (id: string) => Promise<string | null>
  onChanged: () => void
}) {
  const [form, setForm] = useState({ id: '', expiresIn: '' })
  const [issued, setIssued] = useState<IssuedTokenFragment | null>(null)
  const [issuing, setIssuing] = useState(false)
  const [error, setError] = useState<string | null>(null)
  async function submit(e: FormEvent) {
    e.preventDefault()
    setError(null)
    setIssuing(true)
    const r = await props.issue(optional(form.id), optional(form.expiresIn))
    setIssuing(false)
    if (typeof r === 'string') {
      setError(r)
      return
    }
    setIssued(r)
    setForm({ id: '', expiresIn: '' })
    props.onChanged()
  }
  async function remove(id: string) {
    setError(null)
    const refused = await props.remove(id)
    if (refused) setError(refused)
    else props.onChanged()
  }
  return (
    <div className="string-list">
      {issued ? <TokenOnce token={issued} onDone={() => setIssued(null)} /> : null}
      {props.tokens.length === 0 ? <p className="empty">{props.empty}</p> : null}
      <ul>
        {props.tokens.map((t) => (
          <li key={t.id}>
            <code>{t.id}</code>
            <span className="k">
              issued {dateTime(t.issuedAt)}, {t.expiresAt ? `expires ${dateTime(t.expiresAt)}` : 'never expires'}
            </span>
            {props.editable ? <ConfirmButton label={props.removeLabel} confirm={`${props.removeLabel} token ${t.id}?`} onConfirm={() => void remove(t.id)} /> : null}
          </li>
        ))}
      </ul>
      {props.editable ? (
        <InlineForm label={props.formLabel} submit="Create token" disabled={issuing} onSubmit={(e) => void submit(e)}>
          <input aria-label="Token ID" placeholder="ID (random when empty)" value={form.id} onChange={(e) => setForm({ ...form, id: e.target.value })} />
          <input aria-label="Expires in" placeholder={props.expiresPlaceholder} value={form.expiresIn} onChange={(e) => setForm({ ...form, expiresIn: e.target.value })} />
        </InlineForm>
      ) : null}
      <ErrorLine error={error} />
    </div>
  )
}
