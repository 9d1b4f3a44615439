import type { ReactNode } from 'react'
import { navigate } from '../router'

/**
 * Link navigates inside the console without a reload. Its real href keeps
 * middle-click, modifier clicks and "open in new tab" working.
 */
export function Link({ to, className, children }: { to: string; className?: string; children: ReactNode }) {
  return (
    <a
      href={to}
      className={className}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
        e.preventDefault()
        navigate(to)
      }}
    >
      {children}
    </a>
  )
}
