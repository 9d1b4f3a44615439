// Pieces the settings pages share: links, inline confirmation, a token
// shown once, string lists, and me.can answers.
import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react'
import { useClient } from 'urql'
import { serverPermissions } from '../permissions'
import { navigate } from '../router'
import '../actions/actions.css'
import './settings.css'

/** Link navigates inside the console without a reload. */
export function Link({ to, children }: { to: string; children: ReactNode }) {
  return (
    <a
      href={to}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return
        e.preventDefault()
        navigate(to)
      }}
    >
      {children}
    </a>
  )
}

/** ErrorLine shows what failed, or nothing. */
export function ErrorLine({ error }: { error: string | null }) {
  return error ? (
    <p className="error" role="alert">
      {error}
    </p>
  ) : null
}

/** ConfirmButton asks once more, in place, before doing something that cannot be undone. */
export function ConfirmButton({ label, confirm, onConfirm, disabled }: { label: string; confirm: string; onConfirm: () => void; disabled?: boolean }) {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return (
      <button type="button" className="small danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  }
  return (
    <span className="confirm" role="group" aria-label={confirm}>
      <span>{confirm}</span>
      <button
        type="button"
        className="small danger"
        onClick={() => {
          setAsking(false)
          onConfirm()
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" className="small" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}

/** TokenOnce shows a new token, which the server never shows again. */
export function TokenOnce({ token, onDone }: { token: { id: string; token: string; expiresAt?: string | null }; onDone: () => void }) {
  const [copied, setCopied] = useState(false)
  return (
    <div className="token-once" role="status">
      <p>
        Token <strong>{token.id}</strong> {token.expiresAt ? `(expires ${new Date(token.expiresAt).toLocaleString()})` : '(never expires)'}. Copy it now: it is not shown
        again.
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

/** StringList shows a list with a remove button per item and a field to add one. */
export function StringList(props: {
  label: string
  items: string[]
  placeholder?: string
  editable: boolean
  onAdd: (item: string) => void
  onRemove: (index: number) => void
}) {
  const [text, setText] = useState('')
  function add(e: FormEvent) {
    e.preventDefault()
    if (text.trim() === '') return
    props.onAdd(text.trim())
    setText('')
  }
  return (
    <RemovableList labels={props.items} editable={props.editable} onRemove={props.onRemove} onAdd={add}>
      <input aria-label={`New ${props.label}`} value={text} placeholder={props.placeholder} onChange={(e) => setText(e.target.value)} />
    </RemovableList>
  )
}

/**
 * RemovableList lists items by their labels, each with a Remove button
 * when editable, and then the inputs of an inline form that adds one
 * (its onAdd submits it).
 */
export function RemovableList(props: {
  labels: string[]
  editable: boolean
  onRemove: (index: number) => void
  empty?: string
  onAdd: (e: FormEvent) => void
  children: ReactNode
}) {
  return (
    <div className="string-list">
      {props.labels.length === 0 ? <p className="empty">{props.empty ?? 'None.'}</p> : null}
      <ul>
        {props.labels.map((label, i) => (
          <li key={`${i}:${label}`}>
            <code>{label}</code>
            {props.editable ? <ConfirmButton label="Remove" confirm={`Remove ${label}?`} onConfirm={() => props.onRemove(i)} /> : null}
          </li>
        ))}
      </ul>
      {props.editable ? (
        <form className="inline-form" onSubmit={props.onAdd}>
          {props.children}
          <button type="submit" className="small">
            Add
          </button>
        </form>
      ) : null}
    </div>
  )
}

/**
 * useCan answers me.can for one resource and action, per object, batching
 * the questions as the applications list does; undefined while unknown.
 */
export function useCan(resource: string, action: string): (object: string) => boolean | undefined {
  const client = useClient()
  const permissions = useMemo(() => serverPermissions(client, resource, action), [client, resource, action])
  // Re-render when answers arrive.
  const [, setAnswers] = useState(0)
  useEffect(() => permissions.subscribe(() => setAnswers((n) => n + 1)), [permissions])
  return (object) => permissions.get(object)
}
