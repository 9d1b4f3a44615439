import { useMemo } from 'react'
import { useQuery } from 'urql'
import type { DeliveryFiguresFieldsFragment, InsightsScope } from '../gql/graphql'
import { ErrorLine, Loading } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { Toggle } from '../ui/Toggle'
import { RANGES, bars, duration, linePoints, percent, window, type RangeDays } from './charts'
import { InsightsQuery } from './documents'
import './insights.css'

const W = 600
const H = 120

const rangeOptions = RANGES.map((d) => [String(d), `${d} days`] as const)

/**
 * InsightsView shows the delivery figures of an application, a project or
 * the installation over the last `days` days: the DORA figures, sync
 * duration and drift, and charts per bucket (days up to 30 days, weeks
 * beyond).
 */
export function InsightsView({ scope, name = null, namespace = null, days, onDays }: { scope: InsightsScope; name?: string | null; namespace?: string | null; days: RangeDays; onDays: (d: RangeDays) => void }) {
  // The window is fixed when the range is chosen, not at each render.
  const range = useMemo(() => window(days, Date.now()), [days])
  const bucket = days > 30 ? 'WEEK' : 'DAY'
  const [res] = useQuery({ query: InsightsQuery, variables: { scope, name, namespace, from: range.from, to: range.to, bucket } })
  const data = res.data?.insights
  return (
    <div className="insights">
      <div className="insights-bar">
        <Toggle label="Range" options={rangeOptions} value={String(days)} onChange={(v) => onDays(Number(v) as RangeDays)} />
        {data ? (
          <span className="k">
            {data.applications.toLocaleString()} application{data.applications === 1 ? '' : 's'}, {bucket === 'WEEK' ? 'per week' : 'per day'}
          </span>
        ) : null}
      </div>
      <ErrorLine error={res.error ? errorText('Loading the insights failed', res.error) : null} />
      {res.fetching && !data ? <Loading what="the insights" /> : null}
      {data ? (
        <>
          <Figures f={data.total} />
          <DeployChart series={data.series} />
          <LeadTimeChart series={data.series} />
        </>
      ) : null}
    </div>
  )
}

function Figures({ f }: { f: DeliveryFiguresFieldsFragment }) {
  const cards: [string, string, string, string][] = [
    ['deploy-frequency', 'Deployment frequency', `${f.deploysPerDay.toFixed(2)} / day`, `${f.deploys.toLocaleString()} deploys`],
    ['lead-time', 'Lead time for changes', duration(f.leadTimeMedianSeconds), `median; p90 ${duration(f.leadTimeP90Seconds)} (${f.leadTimes} with a commit time)`],
    ['change-failure-rate', 'Change failure rate', percent(f.changeFailureRate), `${f.failedDeploys} of ${f.deploys} deploys failed`],
    ['time-to-restore', 'Time to restore', duration(f.timeToRestoreMedianSeconds), `median of ${f.restores} restored; ${f.failures} failures`],
    ['sync-duration', 'Sync duration', duration(f.syncDurationMedianSeconds), `median; p90 ${duration(f.syncDurationP90Seconds)}; ${f.syncs} syncs`],
    ['drift', 'Drift', duration(f.driftSeconds), 'OutOfSync, added up'],
  ]
  return (
    <dl className="insight-cards">
      {cards.map(([id, title, value, note]) => (
        <div key={id} className="insight-card" data-figure={id}>
          <dt>{title}</dt>
          <dd className="insight-value">{value}</dd>
          <dd className="k">{note}</dd>
        </div>
      ))}
    </dl>
  )
}

function label(f: DeliveryFiguresFieldsFragment): string {
  return new Date(f.start).toISOString().slice(0, 10)
}

function DeployChart({ series }: { series: DeliveryFiguresFieldsFragment[] }) {
  const max = Math.max(0, ...series.map((s) => s.deploys))
  const all = bars(
    series.map((s) => s.deploys),
    W,
    H,
    max,
  )
  const failed = bars(
    series.map((s) => s.failedDeploys),
    W,
    H,
    max,
  )
  return (
    <figure className="insight-chart">
      <figcaption>
        Deploys <span className="legend ok">■ deploys</span> <span className="legend bad">■ failed</span> <span className="k">(most in a bucket: {max})</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label="Deploys per bucket" preserveAspectRatio="none">
        {all.map((b, i) => (
          <rect key={`d${i}`} className="bar-deploys" x={b.x} y={b.y} width={b.width} height={b.height}>
            <title>{`${label(series[i]!)}: ${series[i]!.deploys} deploys, ${series[i]!.failedDeploys} failed`}</title>
          </rect>
        ))}
        {failed.map((b, i) => (b.height > 0 ? <rect key={`f${i}`} className="bar-failed" x={b.x} y={b.y} width={b.width} height={b.height} /> : null))}
      </svg>
    </figure>
  )
}

function LeadTimeChart({ series }: { series: DeliveryFiguresFieldsFragment[] }) {
  const values = series.map((s) => (s.leadTimes > 0 ? s.leadTimeMedianSeconds : null))
  const max = Math.max(0, ...values.map((v) => v ?? 0))
  const points = linePoints(values, W, H)
  return (
    <figure className="insight-chart">
      <figcaption>
        Lead time for changes, median <span className="k">(highest: {duration(max)})</span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label="Lead time per bucket" preserveAspectRatio="none">
        {points ? <polyline className="line-lead" points={points} fill="none" /> : null}
        {points
          ? points.split(' ').map((p, i) => {
              const [x, y] = p.split(',')
              return <circle key={i} className="dot-lead" cx={x} cy={y} r={3} />
            })
          : null}
      </svg>
    </figure>
  )
}
