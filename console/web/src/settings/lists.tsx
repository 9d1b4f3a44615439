// Lists the settings pages edit in place: each item with a Remove button
// (confirmed first), and an inline form (a form on one line) that adds one.
import { useState, type FormEvent, type ReactNode } from 'react'
import { ConfirmButton } from '../ui/ConfirmButton'

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
        <InlineForm submit="Add" onSubmit={props.onAdd}>
          {props.children}
        </InlineForm>
      ) : null}
    </div>
  )
}

/** InlineForm is a form on one line: its inputs, then its submit button. */
export function InlineForm(props: { label?: string; submit: string; disabled?: boolean; onSubmit: (e: FormEvent) => void; children: ReactNode }) {
  return (
    <form className="inline-form" onSubmit={props.onSubmit} aria-label={props.label}>
      {props.children}
      <button type="submit" className="small" disabled={props.disabled}>
        {props.submit}
      </button>
    </form>
  )
}
