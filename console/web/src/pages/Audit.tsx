import { useEffect, useMemo, useState, type FormEvent } from 'react'
import { useQuery, useSubscription } from 'urql'
import { AuditEventsSubscription, AuditLogQuery } from '../audit/documents'
import { emptyAuditView, formatAuditView, liveFilter, mergeLive, objectText, parseAuditView, patchLines, toAuditFilter, type AuditView } from '../audit/view'
import '../audit/audit.css'
import type { AuditEntryRowFragment } from '../gql/graphql'
import { navigate, useLocation } from '../router'
import { ErrorLine } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { Field } from '../ui/form'
import { dateTime } from '../ui/format'

const PAGE = 50

/**
 * AuditPage lists the audit trail, newest first, with the filters of the
 * URL; new entries that match appear at the top as they are recorded.
 */
export function AuditPage() {
  const { search } = useLocation()
  const view = useMemo(() => parseAuditView(search), [search])
  // A window back from now is fixed when the view is chosen, not at each render.
  const filter = useMemo(() => toAuditFilter(view, Date.now()), [view])
  const [after, setAfter] = useState<string | null>(null)
  const [older, setOlder] = useState<AuditEntryRowFragment[]>([])
  const [live, setLive] = useState<AuditEntryRowFragment[]>([])
  useEffect(() => {
    setAfter(null)
    setOlder([])
    setLive([])
  }, [filter])
  const [first] = useQuery({ query: AuditLogQuery, variables: { first: PAGE, filter } })
  const [more] = useQuery({ query: AuditLogQuery, variables: { first: PAGE, after, filter }, pause: after === null })
  useEffect(() => {
    const nodes = more.data?.auditLog.nodes
    if (after !== null && nodes) setOlder((o) => (o.some((e) => e.id === nodes[0]?.id) ? o : [...o, ...nodes]))
  }, [more.data, after])
  const live_ = useMemo(() => liveFilter(filter), [filter])
  useSubscription({ query: AuditEventsSubscription, variables: { filter: live_ } }, (_prev, data) => {
    setLive((l) => mergeLive(l, data.auditEvents))
    return data
  })
  const base = first.data?.auditLog.nodes ?? []
  const entries = dedupe([...live, ...base, ...older])
  const last = after !== null ? more.data?.auditLog.pageInfo : first.data?.auditLog.pageInfo
  const error = first.error ?? more.error
  return (
    <section className="audit-page" aria-labelledby="audit-title">
      <h1 id="audit-title">Audit trail</h1>
      <p className="k">Every change made through the API: who, from where, on which object, what changed (Secret values redacted) and how it ended.</p>
      <AuditFilters view={view} />
      <ErrorLine error={error ? errorText('Loading the audit trail failed', error) : null} />
      {!first.fetching && !error && entries.length === 0 ? <p className="empty">No entries match.</p> : null}
      <ul className="audit-list" aria-label="Audit entries">
        {entries.map((e) => (
          <AuditRow key={e.id} entry={e} />
        ))}
      </ul>
      {last?.hasNextPage && last.endCursor ? (
        <p>
          <button type="button" disabled={more.fetching} onClick={() => setAfter(last.endCursor ?? null)}>
            Older entries
          </button>
        </p>
      ) : null}
    </section>
  )
}

function dedupe(list: AuditEntryRowFragment[]): AuditEntryRowFragment[] {
  const seen = new Set<string>()
  return list.filter((e) => (seen.has(e.id) ? false : (seen.add(e.id), true)))
}

function AuditRow({ entry: e }: { entry: AuditEntryRowFragment }) {
  const lines = patchLines(e.patch)
  return (
    <li className="audit-row" data-audit-id={e.id} data-outcome={e.outcome}>
      <div className="audit-head">
        <time dateTime={e.time}>{dateTime(e.time)}</time>
        <strong title={e.groups.join(', ')}>{e.user}</strong>
        <code>{e.mutation}</code>
        <span className="audit-object">{objectText(e.object)}</span>
        {e.object.project ? <span className="k">project {e.object.project}</span> : null}
        <span className={e.outcome === 'SUCCESS' ? 'audit-ok' : 'audit-failed'}>
          {e.outcome === 'SUCCESS' ? 'succeeded' : `failed: ${e.errorCode ?? 'error'}`}
        </span>
        {e.clientAddress ? <span className="k">from {e.clientAddress}</span> : null}
      </div>
      {lines.length > 0 || e.patchOmitted ? (
        <details>
          <summary>{e.patchOmitted ? 'Change too large to keep' : `Change (${lines.length} ${lines.length === 1 ? 'operation' : 'operations'})`}</summary>
          <pre className="audit-patch">{lines.join('\n')}</pre>
        </details>
      ) : null}
    </li>
  )
}

function AuditFilters({ view }: { view: AuditView }) {
  const [draft, setDraft] = useState(view)
  useEffect(() => setDraft(view), [view])
  function apply(e: FormEvent) {
    e.preventDefault()
    const q = formatAuditView(draft)
    navigate(q ? `/audit?${q}` : '/audit')
  }
  const text = (k: 'user' | 'project' | 'kind' | 'name', label: string) => (
    <Field label={label}>
      <input name={k} value={draft[k]} onChange={(ev) => setDraft({ ...draft, [k]: ev.target.value })} />
    </Field>
  )
  return (
    <form className="audit-filters" aria-label="Filter the audit trail" onSubmit={apply}>
      {text('user', 'User')}
      {text('project', 'Project')}
      {text('kind', 'Kind')}
      {text('name', 'Name')}
      <Field label="Outcome">
        <select name="outcome" value={draft.outcome} onChange={(ev) => setDraft({ ...draft, outcome: ev.target.value as AuditView['outcome'] })}>
          <option value="">Any</option>
          <option value="SUCCESS">Succeeded</option>
          <option value="FAILURE">Failed</option>
        </select>
      </Field>
      <Field label="Since">
        <select name="since" value={draft.since} onChange={(ev) => setDraft({ ...draft, since: ev.target.value as AuditView['since'] })}>
          <option value="">Any time</option>
          <option value="1h">Last hour</option>
          <option value="24h">Last day</option>
          <option value="7d">Last week</option>
        </select>
      </Field>
      <button type="submit" className="primary">
        Filter
      </button>
      <button type="button" onClick={() => navigate('/audit')} disabled={formatAuditView(view) === formatAuditView(emptyAuditView)}>
        Clear
      </button>
    </form>
  )
}
