// The Notifications view: what the application is subscribed to, where
// each subscription is declared, a form to subscribe it and a button to
// unsubscribe its own (for those who may update it); and what the
// controller delivered, or is delivering, newest first, a page at a time,
// live through the notificationDeliveries subscription.
import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { useClient, useMutation, useQuery } from 'urql'
import { onReconnect } from '../client'
import type { AppNotificationSubscriptionsFragment, NotificationDeliveryRowFragment } from '../gql/graphql'
import { ErrorLine, ErrorList, Loading } from '../ui/Alert'
import { Badge } from '../ui/Badge'
import { errorMessage, errorText } from '../ui/errors'
import { Field } from '../ui/form'
import { dateTime } from '../ui/format'
import { NotificationDeliveriesQuery, NotificationDeliveriesSubscription, NotificationSubscriptionsQuery, SubscribeNotificationMutation, UnsubscribeNotificationMutation } from './documents'
import {
  bounded,
  declaredIn,
  firstPages,
  latest,
  liveDelivery,
  olderPage,
  outcomeBadge,
  outcomeHint,
  parseRecipients,
  refreshSize,
  relativeTime,
  removable,
  subscribeProblems,
  triggerChoices,
  unsubscribeInput,
  type Pages,
} from './notifications'

/** PAGE is how many deliveries one page shows; MAX_FIRST the server's cap on first. */
const PAGE = 20
const MAX_FIRST = 500

type Delivery = NotificationDeliveryRowFragment
type Subscription = AppNotificationSubscriptionsFragment['notificationSubscriptions'][number]

/** Notifications is the application page's Notifications view. */
export function Notifications({ name, namespace }: { name: string; namespace: string | null }) {
  return (
    <div className="notifications">
      <Subscriptions name={name} namespace={namespace} />
      <DeliveryList name={name} namespace={namespace} />
    </div>
  )
}

const NO_UPDATE = 'You may not change the subscriptions of this application: that needs applications, update on it.'

function Subscriptions({ name, namespace }: { name: string; namespace: string | null }) {
  const [res, refetch] = useQuery({ query: NotificationSubscriptionsQuery, variables: { name, namespace }, requestPolicy: 'network-only' })
  // The answer of the user's last change, shown until the query (read
  // from the server's cache) is as new.
  const [changed, setChanged] = useState<AppNotificationSubscriptionsFragment | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [, subscribe] = useMutation(SubscribeNotificationMutation)
  const [, unsubscribe] = useMutation(UnsubscribeNotificationMutation)
  const a = res.data?.application
  if (!a) {
    return (
      <SubscriptionsSection>
        {res.error ? (
          <ErrorLine error={errorText('Loading the subscriptions failed', res.error)} />
        ) : res.data ? (
          <p className="empty">The application no longer exists.</p>
        ) : (
          <Loading what="the subscriptions" />
        )}
      </SubscriptionsSection>
    )
  }
  const subs = latest(a, changed)?.notificationSubscriptions ?? []
  const may = a.update === true
  const app = { name: a.name, namespace: a.namespace }

  const remove = async (s: Subscription) => {
    const what = `${s.defaultTriggers ? 'the default triggers' : s.trigger} on ${s.service}`
    setBusy(true)
    setProblem(null)
    const r = await unsubscribe({ input: unsubscribeInput(app, s) })
    setBusy(false)
    if (r.error) return setProblem(errorText(`Unsubscribing ${a.name} from ${what} failed`, r.error))
    if (r.data) setChanged(r.data.unsubscribeNotification)
    refetch({ requestPolicy: 'network-only' })
  }

  return (
    <SubscriptionsSection>
      {may ? null : (
        <p className="k" id="subscriptions-readonly">
          {NO_UPDATE}
        </p>
      )}
      <ErrorLine error={problem} onDismiss={() => setProblem(null)} />
      {subs.length === 0 ? (
        <p className="empty">This application is not subscribed to any notification.</p>
      ) : (
        <table className="subscriptions" aria-label="Notification subscriptions">
          <thead>
            <tr>
              <th scope="col">Trigger</th>
              <th scope="col">Service</th>
              <th scope="col">Recipients</th>
              <th scope="col">Declared in</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {subs.map((s, i) => (
              <SubscriptionRow
                // Two ConfigMap entries may name the same trigger and service.
                key={`${i}/${s.source}/${s.annotation}/${s.trigger}/${s.service}`}
                sub={s}
                project={a.project}
                may={may}
                busy={busy}
                onRemove={() => void remove(s)}
              />
            ))}
          </tbody>
        </table>
      )}
      <SubscribeForm
        may={may}
        subscribed={subs}
        onSubscribe={async (input) => {
          const r = await subscribe({ input: { application: app, ...input } })
          if (r.error) return errorText(`Subscribing ${a.name} failed`, r.error)
          if (r.data) setChanged(r.data.subscribeNotification)
          refetch({ requestPolicy: 'network-only' })
          return null
        }}
      />
    </SubscriptionsSection>
  )
}

function SubscriptionsSection({ children }: { children: ReactNode }) {
  return (
    <section aria-labelledby="subscriptions-title">
      <h3 id="subscriptions-title">Subscriptions</h3>
      {children}
    </section>
  )
}

function SubscriptionRow({ sub: s, project, may, busy, onRemove }: { sub: Subscription; project: string; may: boolean; busy: boolean; onRemove: () => void }) {
  const own = removable(s)
  return (
    <tr data-trigger={s.trigger} data-service={s.service} data-source={s.source}>
      <td>
        <code>{bounded(s.trigger, 120)}</code>
        {s.defaultTriggers ? <span className="k"> · a default trigger</span> : null}
        {s.triggerDefined ? null : <span className="warn-text"> · not defined by the configuration: the controller skips it</span>}
      </td>
      <td>{bounded(s.service, 120)}</td>
      <td className="wrap">{s.recipients.length > 0 ? s.recipients.map((r) => bounded(r, 200)).join(', ') : <span className="k">none (a webhook)</span>}</td>
      <td className="k wrap">{own ? <code>{bounded(s.annotation, 200)}</code> : bounded(declaredIn(s, project), 400)}</td>
      <td>
        {own ? (
          <button
            type="button"
            className="small"
            disabled={!may || busy}
            title={may ? (s.defaultTriggers ? `Removes ${s.annotation}, with every default trigger it takes` : undefined) : NO_UPDATE}
            aria-describedby={may ? undefined : 'subscriptions-readonly'}
            aria-label={`Unsubscribe from ${s.defaultTriggers ? 'the default triggers' : s.trigger} on ${s.service}`}
            onClick={onRemove}
          >
            Unsubscribe
          </button>
        ) : (
          <span className="k">read-only</span>
        )}
      </td>
    </tr>
  )
}

// DEFAULTS and OTHER are the trigger choices that are not a trigger's name.
const DEFAULTS = ''
const OTHER = '\u0000other'

function SubscribeForm({
  may,
  subscribed,
  onSubscribe,
}: {
  may: boolean
  subscribed: readonly Subscription[]
  onSubscribe: (input: { trigger: string | null; service: string; recipients: string[] }) => Promise<string | null>
}) {
  const [choice, setChoice] = useState('on-sync-failed')
  const [other, setOther] = useState('')
  const [service, setService] = useState('')
  const [recipients, setRecipients] = useState('')
  const [problems, setProblems] = useState<string[]>([])
  const [notice, setNotice] = useState('')
  const [busy, setBusy] = useState(false)
  const triggers = triggerChoices(subscribed.map((s) => s.trigger))
  const services = [...new Set(subscribed.map((s) => s.service))].sort()

  async function submit(e: FormEvent) {
    e.preventDefault()
    const input = { trigger: choice === DEFAULTS ? null : choice === OTHER ? other.trim() : choice, service: service.trim(), recipients: parseRecipients(recipients) }
    const found = subscribeProblems(input)
    setProblems(found)
    setNotice('')
    if (found.length > 0) return
    setBusy(true)
    const err = await onSubscribe(input)
    setBusy(false)
    if (err) return setProblems([err])
    setRecipients('')
    setNotice(`Subscribed to ${input.trigger ?? 'the default triggers'} on ${input.service}${input.recipients.length ? `: ${input.recipients.join(', ')}` : ''}.`)
  }

  return (
    <form className="subscribe-form" aria-label="Subscribe to a notification" onSubmit={(e) => void submit(e)}>
      <fieldset disabled={!may || busy} aria-describedby={may ? undefined : 'subscriptions-readonly'}>
        <legend>Subscribe</legend>
        <div className="field-row">
          <Field label="Trigger">
            <select value={choice} onChange={(e) => setChoice(e.target.value)}>
              {triggers.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
              <option value={DEFAULTS}>the default triggers (defaultTriggers)</option>
              <option value={OTHER}>another trigger…</option>
            </select>
          </Field>
          {choice === OTHER ? (
            <Field label="Trigger name">
              <input value={other} onChange={(e) => setOther(e.target.value)} placeholder="on-image-updated" />
            </Field>
          ) : null}
          <Field label="Service">
            <input value={service} list="notification-services" onChange={(e) => setService(e.target.value)} placeholder="slack, or deploy-log for service.webhook.deploy-log" />
          </Field>
          <datalist id="notification-services">
            {services.map((s) => (
              <option key={s} value={s} />
            ))}
          </datalist>
          <Field label="Recipients">
            <input value={recipients} onChange={(e) => setRecipients(e.target.value)} placeholder="deploys; oncall (none for a webhook)" />
          </Field>
        </div>
        <ErrorList problems={problems} />
        <p className="k" role="status">
          {notice}
        </p>
        <div className="row-buttons">
          <button type="submit" className="primary">
            {busy ? 'Subscribing…' : 'Subscribe'}
          </button>
        </div>
      </fieldset>
    </form>
  )
}

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
 * useDeliveries follows the application's deliveries: it subscribes to
 * their changes first, then reads the newest page and merges what arrived
 * meanwhile by key; after a reconnect (changes lost) it reads again, as
 * many as are shown. older() adds the page after the last one shown.
 */
function useDeliveries(name: string, namespace: string | null) {
  const client = useClient()
  const [pages, setPages] = useState<Pages<Delivery> | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [liveError, setLiveError] = useState<string | null>(null)
  const [gone, setGone] = useState(false)
  const [loadingOlder, setLoadingOlder] = useState(false)
  const current = useRef<Pages<Delivery> | null>(null)
  current.current = pages

  useEffect(() => {
    let alive = true
    // Changes that arrive before the first page: merged into it.
    let early: Delivery[] | null = []
    const live = client.subscription(NotificationDeliveriesSubscription, { name, namespace }).subscribe((res) => {
      if (!alive) return
      if (res.error) return setLiveError(errorMessage(res.error))
      const d = res.data?.notificationDeliveries
      if (!d) return
      setLiveError(null)
      if (early) early.push(d)
      else setPages((p) => (p ? liveDelivery(p, d) : p))
    })
    const load = async () => {
      const first = refreshSize(current.current, PAGE, MAX_FIRST)
      const res = await client.query(NotificationDeliveriesQuery, { name, namespace, first, after: null }, { requestPolicy: 'network-only' }).toPromise()
      if (!alive) return
      const arrived = early ?? []
      early = null
      if (res.error) return setError(errorText('Loading the notification deliveries failed', res.error))
      const c = res.data?.application?.notificationDeliveries
      setGone(!c)
      setError(null)
      if (c) setPages(firstPages(c, arrived))
    }
    void load()
    const stop = onReconnect(() => void load())
    return () => {
      alive = false
      live.unsubscribe()
      stop()
    }
  }, [client, name, namespace])

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

  return { pages, error, liveError, gone, loadingOlder, older }
}

function DeliveryList({ name, namespace }: { name: string; namespace: string | null }) {
  const { pages, error, liveError, gone, loadingOlder, older } = useDeliveries(name, namespace)
  const now = useNow(30_000)
  return (
    <section aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">Deliveries</h3>
      <ErrorLine error={error} />
      {liveError ? <p className="k">Not updated live: {bounded(liveError, 200)}</p> : null}
      {gone ? <p className="empty">The application no longer exists.</p> : null}
      {!pages && !error && !gone ? <Loading what="the deliveries" /> : null}
      {pages ? (
        <>
          <p className="k" aria-live="polite">
            {pages.totalCount === 0
              ? 'Nothing was notified for this application yet.'
              : `${pages.nodes.length.toLocaleString()} of ${pages.totalCount.toLocaleString()} ${pages.totalCount === 1 ? 'delivery' : 'deliveries'}, newest first.`}
          </p>
          <ul className="deliveries" aria-label="Notification deliveries">
            {pages.nodes.map((d) => (
              <DeliveryRow key={d.key} delivery={d} now={now} />
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
function DeliveryRow({ delivery: d, now }: { delivery: Delivery; now: number }) {
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
