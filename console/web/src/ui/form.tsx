// The pieces every form of the console is made of, so they look and read alike.
import type { ReactNode } from 'react'
import './ui.css'

/** Field labels one input (or select, textarea), the label above it. */
export function Field({ label, children }: { label: ReactNode; children: ReactNode }) {
  return (
    <label className="field">
      {label}
      {children}
    </label>
  )
}

/** Check is a checkbox (or radio button) with its label and an optional hint after it. */
export function Check(props: {
  label: ReactNode
  hint?: ReactNode
  checked: boolean
  onChange: (checked: boolean) => void
  type?: 'checkbox' | 'radio'
  name?: string
  value?: string
  disabled?: boolean
}) {
  return (
    <label className="check">
      <input
        type={props.type ?? 'checkbox'}
        name={props.name}
        value={props.value}
        disabled={props.disabled}
        checked={props.checked}
        onChange={(e) => props.onChange(e.target.checked)}
      />{' '}
      {props.label}
      {props.hint ? <span className="k"> {props.hint}</span> : null}
    </label>
  )
}

/** FormButtons ends a form: other buttons it needs (before), its submit button (primary, or danger) and Cancel. */
export function FormButtons({
  submit,
  busy,
  disabled,
  danger,
  onCancel,
  before,
}: {
  submit: string
  busy?: string | false
  disabled?: boolean
  danger?: boolean
  onCancel: () => void
  before?: ReactNode
}) {
  return (
    <p className="dialog-buttons">
      {before}
      <button type="submit" className={danger ? 'danger' : 'primary'} disabled={disabled || !!busy}>
        {busy || submit}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </p>
  )
}
