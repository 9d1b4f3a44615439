// Follows one ApplicationSet through the applicationSet subscription: it
// sends the set as it is, then again at each change (the controller's
// status included), so the page needs no query of its own and, after the
// socket comes back, the resubscription brings it up to date.
import { useEffect, useState } from 'react'
import { useClient } from 'urql'
import { errorState, type LoadState } from '../ui/loadState'
import type { SetPageFragment } from '../gql/graphql'
import { ApplicationSetSubscription } from './documents'

/** SetData is the set as last sent (null until then, or once it is gone) and what that means for the page. */
export interface SetData {
  state: LoadState
  set: SetPageFragment | null
}

/** useApplicationSet follows the set name in namespace (the server's own when null). */
export function useApplicationSet(name: string, namespace: string | null): SetData {
  const client = useClient()
  const [data, setData] = useState<SetData>({ state: { kind: 'loading' }, set: null })
  useEffect(() => {
    setData({ state: { kind: 'loading' }, set: null })
    const sub = client.subscription(ApplicationSetSubscription, { name, namespace }).subscribe((res) => {
      if (res.error) {
        const error = res.error
        setData((d) => ({ ...d, state: errorState(error) }))
        return
      }
      if (!res.data) return
      // Null: the set is gone (deleted), or was never there.
      const set = res.data.applicationSet ?? null
      setData({ set, state: set ? { kind: 'ready' } : { kind: 'notFound' } })
    })
    return () => sub.unsubscribe()
  }, [client, name, namespace])
  return data
}
