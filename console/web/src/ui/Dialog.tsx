import { useEffect, useId, useRef, type ReactNode } from 'react'
import './ui.css'

/**
 * Dialog is a modal <dialog>: the browser keeps focus inside it and closes
 * it on Escape, which here calls onClose so React stays in charge.
 */
export function Dialog({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null)
  const id = useId()
  useEffect(() => {
    const d = ref.current
    if (d && !d.open) d.showModal()
    return () => d?.close()
  }, [])
  return (
    <dialog
      ref={ref}
      className={wide ? 'gcd-dialog wide' : 'gcd-dialog'}
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault()
        onClose()
      }}
    >
      <header className="dialog-head">
        <h2 id={id}>{title}</h2>
        <button type="button" className="small" aria-label="Close" onClick={onClose}>
          ✕
        </button>
      </header>
      {children}
    </dialog>
  )
}
