import type { ReactNode } from 'react'

/** ErrorLine shows what failed, or nothing; onDismiss adds a button that hides it. */
export function ErrorLine({ error, onDismiss }: { error: ReactNode; onDismiss?: () => void }) {
  if (!error) return null
  return (
    <p className="error" role="alert">
      {error}
      {onDismiss ? (
        <>
          {' '}
          <button type="button" className="small" onClick={onDismiss}>
            Dismiss
          </button>
        </>
      ) : null}
    </p>
  )
}

/** ErrorList shows the problems a form was refused for, or nothing. */
export function ErrorList({ problems }: { problems: readonly string[] }) {
  if (problems.length === 0) return null
  return (
    <ul className="error" role="alert">
      {problems.map((p) => (
        <li key={p}>{p}</li>
      ))}
    </ul>
  )
}

/** Loading stands in for what has not arrived yet: "Loading…", or "Loading what…". */
export function Loading({ what }: { what?: string }) {
  return <p className="empty">{what ? `Loading ${what}…` : 'Loading…'}</p>
}
