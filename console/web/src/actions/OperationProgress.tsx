import type { ActionsAppFragment } from '../gql/graphql'
import { Badge } from '../ui/Badge'
import { operationBadge, syncBadge } from '../ui/badges'
import { dateTime } from '../ui/format'
import { groupProgress, operationRunning, startedBy, type StepState } from './progress'

type OperationState = NonNullable<ActionsAppFragment['status']['operationState']>

const stateLabel: Record<StepState, { symbol: string; label: string }> = {
  done: { symbol: '✓', label: 'done' },
  failed: { symbol: '✕', label: 'failed' },
  running: { symbol: '◌', label: 'running' },
  waiting: { symbol: '…', label: 'waiting' },
}

/** PendingOperation stands for an operation requested that the controller has not started yet. */
export function PendingOperation({ by }: { by: string }) {
  return (
    <section className="op-progress" aria-label="Operation" aria-live="polite" data-phase="Pending">
      <p className="op-head">
        <span className="op-phase">Pending</span>
        <span className="k">requested{by ? ` by ${by}` : ''}; the controller starts it shortly</span>
      </p>
    </section>
  )
}

/**
 * OperationProgress shows the current or last operation, wave by wave, as
 * the subscription delivers it, with the application's sync status now:
 * a sync that succeeded may still leave it OutOfSync.
 */
export function OperationProgress({ op, syncStatus }: { op: OperationState; syncStatus: string }) {
  const running = operationRunning(op.phase)
  const groups = groupProgress(op.syncResult?.resources ?? [], running)
  const badge = operationBadge(op.phase)
  const sync = op.operation.sync
  return (
    <section className="op-progress" aria-label="Operation" aria-live="polite" data-phase={op.phase}>
      <p className="op-head">
        {badge ? <Badge badge={badge} /> : null}
        <span className="op-phase">{op.phase}</span>
        {sync?.dryRun ? <em>dry run</em> : null}
        <span className="k">application now</span> <Badge badge={syncBadge(syncStatus)} />
        {op.syncResult?.revision ? <code title={op.syncResult.revision}>{op.syncResult.revision.slice(0, 7)}</code> : null}
        <span className="k">
          started {dateTime(op.startedAt)}
          {op.finishedAt ? `, finished ${dateTime(op.finishedAt)}` : ''}
          {op.retryCount > 0 ? `, retried ${op.retryCount}×` : ''}
          {startedBy(op.operation.initiatedBy)}
        </span>
      </p>
      {op.message ? <p className="op-message">{op.message}</p> : null}
      {groups.length > 0 ? (
        <ol className="waves">
          {groups.map((g) => (
            <li key={`${g.phase}:${g.wave}`} className={`wave state-${g.state}`} data-wave={g.wave} data-state={g.state}>
              <h3>
                <span aria-hidden="true">{stateLabel[g.state].symbol}</span> {g.phase} · wave {g.wave} <span className="k">— {stateLabel[g.state].label}</span>
              </h3>
              <ul>
                {g.results.map(({ result: r, state }) => (
                  <li key={`${r.group}/${r.kind}/${r.namespace}/${r.name}/${r.hookType}`} className={`state-${state}`} data-state={state}>
                    <span aria-hidden="true">{stateLabel[state].symbol}</span>{' '}
                    <span className="res">
                      {r.kind}/{r.name}
                    </span>{' '}
                    <span className="k">
                      {r.hookType ? `${r.hookType} hook · ` : ''}
                      {state === 'waiting' ? 'waiting' : r.hookType ? r.hookPhase : r.status || r.hookPhase}
                    </span>
                    {r.message && state !== 'waiting' ? <span className="msg"> — {r.message}</span> : null}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  )
}
