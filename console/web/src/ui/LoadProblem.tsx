import type { ReactNode } from 'react'
import { ErrorLine, Loading } from './Alert'
import type { LoadState } from './loadState'

/**
 * LoadProblem says why the page of one object (kind, e.g. "application",
 * whose RBAC resource is resource) shows nothing of it yet: still loading,
 * not there, not visible to the caller, or another error; back leads to
 * its list.
 */
export function LoadProblem({ state, name, kind, resource, back }: { state: LoadState; name: string; kind: string; resource: string; back: ReactNode }) {
  switch (state.kind) {
    case 'loading':
      return <Loading what={name} />
    case 'ready':
      return null
    case 'notFound':
      return (
        <ErrorLine
          error={
            <>
              There is no {kind} named “{name}” (it may have been deleted). Check the name in the address, or pick one from the list. {back}
            </>
          }
        />
      )
    case 'forbidden':
      return (
        <ErrorLine
          error={
            <>
              You may not see “{name}”. Ask an administrator for the get right on {resource} in its project. {back}
            </>
          }
        />
      )
    case 'error':
      return <ErrorLine error={`${name} could not be loaded: ${state.message} Reload the page to try again.`} />
  }
}
