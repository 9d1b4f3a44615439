// Loads one application with its resource tree, then keeps both live through
// the application and resourceTree subscriptions (no polling). Each new tree
// is compared with the one before, so the graph can flash what changed.
import { useEffect, useState } from 'react'
import { useClient } from 'urql'
import { onReconnect } from '../client'
import type { AppHeaderFragment, TreeFragment } from '../gql/graphql'
import { ApplicationPageQuery, ApplicationPageSubscription, ResourceTreeSubscription } from './documents'
import { errorState, type LoadState } from '../ui/loadState'
import { changedIds } from './tree'

/** How long a changed node stays highlighted. */
const HIGHLIGHT_MS = 3000

export type { LoadState } from '../ui/loadState'

export interface ApplicationData {
  state: LoadState
  app: AppHeaderFragment | null
  tree: TreeFragment | null
  /** ids (nodeId) of resources whose health or sync changed in the last update. */
  changed: ReadonlySet<string>
  /** counts tree updates, so views can refetch what depends on the tree. */
  version: number
}

const empty: ReadonlySet<string> = new Set()

export function useApplication(name: string, namespace: string | null = null): ApplicationData {
  const client = useClient()
  const [data, setData] = useState<ApplicationData>({ state: { kind: 'loading' }, app: null, tree: null, changed: empty, version: 0 })

  useEffect(() => {
    let alive = true
    let clear: ReturnType<typeof setTimeout> | undefined
    setData({ state: { kind: 'loading' }, app: null, tree: null, changed: empty, version: 0 })

    const setTree = (tree: TreeFragment | null) => {
      setData((d) => {
        const changed = tree ? changedIds(d.tree?.nodes ?? null, tree.nodes) : empty
        return { ...d, tree, changed, version: d.version + 1 }
      })
      clearTimeout(clear)
      clear = setTimeout(() => alive && setData((d) => (d.changed.size ? { ...d, changed: empty } : d)), HIGHLIGHT_MS)
    }
    const setApp = (app: AppHeaderFragment | null) =>
      setData((d) => ({ ...d, app, state: app ? { kind: 'ready' } : d.state.kind === 'forbidden' ? d.state : { kind: 'notFound' } }))

    const load = async () => {
      const res = await client.query(ApplicationPageQuery, { name, namespace }, { requestPolicy: 'network-only' }).toPromise()
      if (!alive) return
      if (res.error) {
        const error = res.error
        setData((d) => ({ ...d, state: errorState(error) }))
        return
      }
      const app = res.data?.application ?? null
      setApp(app)
      if (app?.resourceTree) setTree(app.resourceTree)
    }
    void load()

    const appSub = client.subscription(ApplicationPageSubscription, { name, namespace }).subscribe((res) => {
      if (!alive) return
      if (res.error) {
        const error = res.error
        setData((d) => ({ ...d, state: errorState(error) }))
        return
      }
      if (res.data) setApp(res.data.application ?? null)
    })
    const treeSub = client.subscription(ResourceTreeSubscription, { name, namespace }).subscribe((res) => {
      if (alive && res.data?.resourceTree) setTree(res.data.resourceTree)
    })
    // Updates sent while the socket was down are lost: read the state again.
    const stop = onReconnect(() => void load())
    return () => {
      alive = false
      clearTimeout(clear)
      appSub.unsubscribe()
      treeSub.unsubscribe()
      stop()
    }
  }, [client, name])

  return data
}
