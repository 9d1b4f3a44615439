// Loads the applications a view selects, a page at a time, and keeps the
// loaded rows live through the applicationEvents subscription.
import { useCallback, useEffect, useRef, useState } from 'react'
import { useClient } from 'urql'
import { onReconnect } from './client'
import { ApplicationEventsSubscription, ApplicationRowQuery, ApplicationsQuery } from './documents'
import { toFilter, toOrder, type ListView } from './filters'
import { appendRows, applyEvent, makeRows, replaceRow, type Rows } from './rows'
import { errorMessage } from './ui/errors'

/** How many applications a page asks for; the first page paints fast at any total. */
export const PAGE = 200
const MAX_PAGE = 500
// How long after an app's last event its row is fetched again, and how
// many apps may wait for that before a reload of the list is cheaper.
const REFETCH_DELAY_MS = 1500
const MAX_REFETCHES = 50

export interface AppList {
  rows: Rows
  totalCount: number | null
  hasNext: boolean
  loading: boolean
  error: string | null
  loadMore: () => void
  /** changes counts each event, so views depending on totals can refresh */
  eventCount: number
}

export function useAppList(view: ListView): AppList {
  const client = useClient()
  const [rows, setRows] = useState<Rows>(() => makeRows([]))
  const [totalCount, setTotal] = useState<number | null>(null)
  const [cursor, setCursor] = useState<string | null>(null)
  const [hasNext, setHasNext] = useState(false)
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<string | null>(null)
  const [eventCount, setEventCount] = useState(0)
  // Each reload gets a generation; answers of an older one are dropped.
  const gen = useRef(0)
  const loaded = useRef(0)
  const filter = JSON.stringify(toFilter(view))
  const order = view.sort

  const fetchPage = useCallback(
    async (first: number, after: string | null, replace: boolean) => {
      const g = gen.current
      setLoading(true)
      const res = await client
        .query(
          ApplicationsQuery,
          { first, after, filter: JSON.parse(filter) as ReturnType<typeof toFilter>, orderBy: toOrder(order) },
          { requestPolicy: 'network-only' },
        )
        .toPromise()
      if (g !== gen.current) return
      setLoading(false)
      if (res.error || !res.data) {
        setError(res.error ? errorMessage(res.error) : 'The list could not be loaded.')
        return
      }
      const c = res.data.applications
      setError(null)
      setTotal(c.totalCount)
      setCursor(c.pageInfo.endCursor ?? null)
      setHasNext(c.pageInfo.hasNextPage)
      setRows((prev) => {
        const next = replace ? makeRows(c.nodes) : appendRows(prev, c.nodes)
        loaded.current = next.list.length
        return next
      })
    },
    [client, filter, order],
  )

  const reload = useCallback(
    (first: number) => {
      gen.current++
      void fetchPage(Math.min(Math.max(first, PAGE), MAX_PAGE), null, true)
    },
    [fetchPage],
  )

  useEffect(() => {
    setRows(makeRows([]))
    setTotal(null)
    reload(PAGE)
  }, [reload])

  const loadMore = useCallback(() => {
    if (loading || !hasNext) return
    void fetchPage(PAGE, cursor, false)
  }, [loading, hasNext, cursor, fetchPage])

  useEffect(() => {
    // An event patches its row at once; a little later the row is fetched
    // again, since the event's application may predate the change and
    // fields other than the statuses have no event.
    const refetches = new Map<string, ReturnType<typeof setTimeout>>()
    const cancelRefetches = () => {
      for (const t of refetches.values()) clearTimeout(t)
      refetches.clear()
    }
    const refetchSoon = (name: string, namespace: string) => {
      const key = `${namespace}/${name}`
      clearTimeout(refetches.get(key))
      if (refetches.size >= MAX_REFETCHES) {
        cancelRefetches()
        reload(loaded.current)
        return
      }
      refetches.set(
        key,
        setTimeout(() => {
          refetches.delete(key)
          void client
            .query(ApplicationRowQuery, { name, namespace }, { requestPolicy: 'network-only' })
            .toPromise()
            .then((res) => {
              const app = res.data?.application
              if (app) setRows((prev) => replaceRow(prev, app))
            })
        }, REFETCH_DELAY_MS),
      )
    }
    const sub = client.subscription(ApplicationEventsSubscription, {}).subscribe((res) => {
      const ev = res.data?.applicationEvents
      if (!ev) return
      setEventCount((n) => n + 1)
      // Events were lost: what is shown may be stale, so load it again.
      if (ev.lagged) {
        cancelRefetches()
        reload(loaded.current)
        return
      }
      setRows((prev) => applyEvent(prev, ev))
      if (ev.name && ev.namespace) refetchSoon(ev.name, ev.namespace)
    })
    // Events sent while the socket was down are lost: load again.
    const stop = onReconnect(() => reload(loaded.current))
    return () => {
      sub.unsubscribe()
      stop()
      cancelRefetches()
    }
  }, [client, reload])

  return { rows, totalCount, hasNext, loading, error, loadMore, eventCount }
}
