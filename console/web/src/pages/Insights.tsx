import { useMemo, useState, type FormEvent } from 'react'
import { InsightsView } from '../insights/InsightsView'
import { rangeOf, type RangeDays } from '../insights/charts'
import { navigate, useLocation } from '../router'

/** INSIGHTS_PATH is the delivery insights dashboard. */
export const INSIGHTS_PATH = '/insights'

/**
 * InsightsPage is the delivery insights dashboard: the installation's
 * figures, or one project's (?project=), over the last 7, 30 or 90 days
 * (?days=), counting the applications the user may see.
 */
export function InsightsPage() {
  const { search } = useLocation()
  const params = useMemo(() => new URLSearchParams(search), [search])
  const project = params.get('project') ?? ''
  const days = rangeOf(params.get('days'))
  const [draft, setDraft] = useState(project)
  const go = (p: string, d: RangeDays) => {
    const q = new URLSearchParams()
    if (p) q.set('project', p)
    if (d !== 30) q.set('days', String(d))
    const s = q.toString()
    navigate(INSIGHTS_PATH + (s ? `?${s}` : ''), { replace: true })
  }
  const submit = (e: FormEvent) => {
    e.preventDefault()
    go(draft.trim(), days)
  }
  return (
    <section className="insights-page" aria-labelledby="insights-title">
      <h1 id="insights-title">Delivery insights</h1>
      <p className="k">
        How often {project ? `project ${project}` : 'the installation'} deploys, how long a commit takes to be deployed, how often a deploy fails and how fast it recovers (the DORA figures), with sync duration and drift.
      </p>
      <form className="insights-scope" onSubmit={submit}>
        <label>
          Project <input value={draft} placeholder="all projects" onChange={(e) => setDraft(e.target.value)} />
        </label>
        <button type="submit">Show</button>
      </form>
      <InsightsView key={project} scope={project ? 'PROJECT' : 'INSTALLATION'} name={project || null} days={days} onDays={(d) => go(project, d)} />
    </section>
  )
}
