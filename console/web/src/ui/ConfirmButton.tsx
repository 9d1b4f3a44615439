import { useState } from 'react'
import './ui.css'

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
