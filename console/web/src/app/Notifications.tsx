// The Notifications view: what the controller delivered, or is delivering,
// for the application (its state annotation, read through the API), newest
// first, a page at a time.
import { useCallback, useEffect, useRef, useState } from 'react'
import { useClient } from 'urql'
import type { NotificationDeliveryRowFragment } from '../gql/graphql'
import { ErrorLine, Loading } from '../ui/Alert'
import { Badge } from '../ui/Badge'
import { errorText } from '../ui/errors'
import { dateTime } from '../ui/format'
import { NotificationDeliveriesQuery } from './documents'
import { bounded, firstPages, olderPage, outcomeBadge, outcomeHint, refreshSize, relativeTime, type Pages } from './notifications'

/** PAGE is how many deliveries one page shows; MAX_FIRST the server's cap on first. */
const PAGE = 20
const MAX_FIRST = 500

type Deliveries = Pages<NotificationDeliveryRowFragment>

/** useNow is the time, renewed every period ms, so relative times age. */
function useNow(period: number): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), period)
    return () => clearInterval(t)
  }, [period])
  return now
}

/**
 * useDeliveries loads the newest page of the application's deliveries, and
 * again (as many as are shown) each time changes counts up; older() adds
 * the page after the last one shown.
 */
function useDeliveries(name: string, namespace: string | null, changes: number) {
  const client = useClient()
  const [pages, setPages] = useState<Deliveries | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [gone, setGone] = useState(false)
  const [loadingOlder, setLoadingOlder] = useState(false)
  const current = useRef<Deliveries | null>(null)
  current.current = pages

  useEffect(() => {
    let alive = true
    const first = refreshSize(current.current, PAGE, MAX_FIRST)
    void client
      .query(NotificationDeliveriesQuery, { name, namespace, first, after: null }, { requestPolicy: 'network-only' })
      .toPromise()
      .then((res) => {
        if (!alive) return
        if (res.error) return setError(errorText('Loading the notification deliveries failed', res.error))
        const c = res.data?.application?.notificationDeliveries
        setGone(!c)
        setError(null)
        if (c) setPages(firstPages(c))
      })
    return () => {
      alive = false
    }
  }, [client, name, namespace, changes])

  const older = useCallback(async () => {
    const after = current.current?.endCursor
    if (!after) return
    setLoadingOlder(true)
    const res = await client.query(NotificationDeliveriesQuery, { name, namespace, first: PAGE, after }, { requestPolicy: 'network-only' }).toPromise()
    setLoadingOlder(false)
    if (res.error) return setError(errorText('Loading older notification deliveries failed', res.error))
    const c = res.data?.application?.notificationDeliveries
    if (c) setPages((p) => (p ? olderPage(p, after, c) : p))
  }, [client, name, namespace])

  return { pages, error, gone, loadingOlder, older }
}

/** Notifications is the application page's Notifications view. */
export function Notifications({ name, namespace }: { name: string; namespace: string | null }) {
  return (
    <div className="notifications">
      <DeliveryList name={name} namespace={namespace} changes={0} />
    </div>
  )
}

function DeliveryList({ name, namespace, changes }: { name: string; namespace: string | null; changes: number }) {
  const { pages, error, gone, loadingOlder, older } = useDeliveries(name, namespace, changes)
  const now = useNow(30_000)
  return (
    <section aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">Deliveries</h3>
      <ErrorLine error={error} />
      {gone ? <p className="empty">The application no longer exists.</p> : null}
      {!pages && !error && !gone ? <Loading what="the deliveries" /> : null}
      {pages ? (
        <>
          <p className="k" aria-live="polite">
            {pages.totalCount === 0
              ? 'Nothing was notified for this application yet.'
              : `${pages.edges.length.toLocaleString()} of ${pages.totalCount.toLocaleString()} ${pages.totalCount === 1 ? 'delivery' : 'deliveries'}, newest first.`}
          </p>
          <ul className="deliveries" aria-label="Notification deliveries">
            {pages.edges.map((e) => (
              <DeliveryRow key={e.cursor} delivery={e.node} now={now} />
            ))}
          </ul>
          {pages.hasNextPage && pages.endCursor ? (
            <p>
              <button type="button" disabled={loadingOlder} onClick={() => void older()}>
                {loadingOlder ? 'Loading…' : 'Older deliveries'}
              </button>
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  )
}

// Server strings are shown as text, each cut to a length a row can hold.
function DeliveryRow({ delivery: d, now }: { delivery: NotificationDeliveryRowFragment; now: number }) {
  const hint = outcomeHint(d.outcome, d.attempts)
  return (
    <li className="delivery" data-trigger={d.trigger} data-service={d.service} data-recipient={d.recipient} data-outcome={d.outcome}>
      <div className="delivery-head">
        <Badge badge={outcomeBadge(d.outcome)} title={hint} />
        <code className="delivery-trigger">{bounded(d.trigger, 120)}</code>
        <span>
          to <strong>{bounded(d.service, 120)}</strong>
          {d.recipient ? <> · {bounded(d.recipient, 200)}</> : null}
        </span>
        <span className="k">
          {d.attempts} {d.attempts === 1 ? 'attempt' : 'attempts'}
          {hint ? ` · ${hint}` : ''}
        </span>
        <time dateTime={d.time} title={dateTime(d.time)} className="k">
          {relativeTime(d.time, now)}
        </time>
      </div>
      {d.error ? <p className="delivery-error">{bounded(d.error, 1000)}</p> : null}
    </li>
  )
}
