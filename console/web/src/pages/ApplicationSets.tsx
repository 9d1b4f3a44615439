import { useEffect, useMemo, useState } from 'react'
import { useQuery } from 'urql'
import { generatorsSummary, setState } from '../appsets/view'
import { ApplicationSetsQuery } from '../appsets/documents'
import { NEW_SET_PATH } from '../appsets/NewApplicationSet'
import '../appsets/appsets.css'
import { ProjectsQuery } from '../documents'
import type { SetRowFragment } from '../gql/graphql'
import { useCan } from '../permissions'
import { SETS_PATH, navigate, setPath, useLocation } from '../router'
import { ErrorLine } from '../ui/Alert'
import { Badge } from '../ui/Badge'
import { errorText } from '../ui/errors'
import { Link } from '../ui/Link'
import { useSearchText } from '../ui/useSearchText'

/** How many sets a page asks for. */
const PAGE = 100

/**
 * ApplicationSetsPage lists the ApplicationSets the caller may see, a page
 * at a time, with a name search kept in the URL (?q=).
 */
export function ApplicationSetsPage() {
  const { search } = useLocation()
  const q = useMemo(() => new URLSearchParams(search).get('q') ?? '', [search])
  const filter = useMemo(() => (q ? { search: q } : null), [q])
  const [after, setAfter] = useState<string | null>(null)
  const [older, setOlder] = useState<SetRowFragment[]>([])
  useEffect(() => {
    setAfter(null)
    setOlder([])
  }, [filter])
  const [first] = useQuery({ query: ApplicationSetsQuery, variables: { first: PAGE, filter }, requestPolicy: 'cache-and-network' })
  const [more] = useQuery({ query: ApplicationSetsQuery, variables: { first: PAGE, after, filter }, pause: after === null })
  useEffect(() => {
    const nodes = more.data?.applicationSets.nodes
    if (after !== null && nodes) setOlder((o) => (o.some((s) => s.id === nodes[0]?.id) ? o : [...o, ...nodes]))
  }, [more.data, after])
  const sets = [...(first.data?.applicationSets.nodes ?? []), ...older]
  const total = first.data?.applicationSets.totalCount ?? null
  const last = after !== null ? more.data?.applicationSets.pageInfo : first.data?.applicationSets.pageInfo
  const error = first.error ?? more.error
  const canCreate = useCanCreateSomewhere()

  return (
    <section className="sets" aria-labelledby="sets-title">
      <div className="apps-head">
        <h1 id="sets-title">ApplicationSets</h1>
        <p className="count" aria-live="polite">
          {total === null ? 'Loading…' : `${total.toLocaleString()} ${total === 1 ? 'ApplicationSet' : 'ApplicationSets'}`}
        </p>
        <span className="spacer" />
        {canCreate ? (
          <Link className="button" to={NEW_SET_PATH}>
            New ApplicationSet
          </Link>
        ) : null}
      </div>
      <SearchBox q={q} />
      <ErrorLine error={error ? errorText('Loading the ApplicationSets failed', error) : null} />
      {total === 0 ? <p className="empty">{q ? 'No ApplicationSet matches this search.' : 'No ApplicationSets yet.'}</p> : null}
      {sets.length > 0 ? (
        <ul className="set-list" aria-label="ApplicationSets">
          <li className="set-row th" aria-hidden="true">
            <span>Name</span>
            <span>Project</span>
            <span>Generators</span>
            <span>Applications</span>
            <span>Status</span>
          </li>
          {sets.map((s) => (
            <SetRow key={s.id} set={s} />
          ))}
        </ul>
      ) : null}
      {last?.hasNextPage && last.endCursor ? (
        <p className="more">
          <button type="button" disabled={more.fetching} onClick={() => setAfter(last.endCursor ?? null)}>
            {more.fetching ? 'Loading…' : `Load more (${sets.length.toLocaleString()} of ${total?.toLocaleString()} shown)`}
          </button>
        </p>
      ) : null}
    </section>
  )
}

function SetRow({ set: s }: { set: SetRowFragment }) {
  const state = setState(s.status.conditions)
  const generators = generatorsSummary(s.spec.generators)
  return (
    <li className="set-row" data-set={s.name}>
      <span className="name">
        <Link to={setPath(s.name, s.namespace)}>{s.name}</Link>
        {s.deleting ? <em> (deleting)</em> : null}
        <span className="k"> {s.namespace}</span>
      </span>
      <span>{s.project}</span>
      <span className="ellipsis" title={generators}>
        {generators}
        {s.spec.strategy ? <span className="k"> · {s.spec.strategy}</span> : null}
      </span>
      <span data-count={s.status.resourcesCount}>{s.status.resourcesCount.toLocaleString()}</span>
      <span className="set-line">
        <Badge badge={state.badge} title={state.message} />
        {state.badge.tone === 'bad' ? <span className="error">{state.message}</span> : null}
      </span>
    </li>
  )
}

/** SearchBox filters by name after a pause in typing, replacing the history entry. */
function SearchBox({ q }: { q: string }) {
  const [text, setText] = useSearchText(q, (t) => navigate(t ? `${SETS_PATH}?q=${encodeURIComponent(t)}` : SETS_PATH, { replace: true }))
  return (
    <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
      <label>
        Search
        <input type="search" name="q" placeholder="ApplicationSet name" value={text} onChange={(e) => setText(e.target.value)} />
      </label>
    </form>
  )
}

/**
 * useCanCreateSomewhere reports whether the caller may create a set in at
 * least one project ("<project>/*"), so that the New button shows only to
 * those it can serve; a set whose project is templated needs more, which
 * the server checks on Save.
 */
function useCanCreateSomewhere(): boolean {
  const [projects] = useQuery({ query: ProjectsQuery })
  const can = useCan('applicationsets', 'create')
  return (projects.data?.projects.nodes ?? []).some((p) => can(`${p.name}/*`) === true)
}
