// How a running sync reads: its resources grouped by phase and wave, in
// the order the controller works through them. The controller records a
// result for every resource before it starts (hookPhase empty: waiting),
// then fills in each one's hookPhase as it runs (Running, Succeeded,
// Failed ...); results still waiting are dropped when the sync ends.

export interface ProgressResult {
  group: string
  kind: string
  namespace: string
  name: string
  status: string
  message: string
  hookType: string
  hookPhase: string
  syncPhase: string
  syncWave: number
}

export type StepState = 'done' | 'failed' | 'running' | 'waiting'

export interface ProgressGroup {
  phase: string
  wave: number
  state: StepState
  results: { result: ProgressResult; state: StepState }[]
}

const PHASES = ['PreSync', 'Sync', 'PostSync', 'SyncFail']

function phaseRank(p: string): number {
  const i = PHASES.indexOf(p || 'Sync')
  return i < 0 ? PHASES.length : i
}

/**
 * resultState is where one resource stands. A resource that is not a hook
 * is done once applied (its hookPhase stays Running, as in Argo CD); its
 * wave then waits for health, which the group's state shows.
 */
function resultState(r: ProgressResult): StepState {
  if (r.status === 'SyncFailed' || r.hookPhase === 'Failed' || r.hookPhase === 'Error') return 'failed'
  if (r.hookPhase === '') return 'waiting'
  if (r.hookType !== '' && (r.hookPhase === 'Running' || r.hookPhase === 'Terminating')) return 'running'
  return 'done'
}

/**
 * groupProgress orders the results into phase-and-wave groups. While the
 * operation runs, the first group not yet done is the one running (it
 * may be done applying and be waiting for its resources to turn healthy)
 * and every later one is waiting.
 */
export function groupProgress(results: readonly ProgressResult[], running: boolean): ProgressGroup[] {
  const byKey = new Map<string, ProgressGroup>()
  for (const r of results) {
    const phase = r.syncPhase || 'Sync'
    const key = `${phaseRank(phase)}:${r.syncWave}`
    let g = byKey.get(key)
    if (!g) {
      g = { phase, wave: r.syncWave, state: 'done', results: [] }
      byKey.set(key, g)
    }
    g.results.push({ result: r, state: resultState(r) })
  }
  const groups = [...byKey.values()].sort((a, b) => phaseRank(a.phase) - phaseRank(b.phase) || a.wave - b.wave)
  for (const g of groups) {
    const states = g.results.map((x) => x.state)
    g.state = states.includes('failed')
      ? 'failed'
      : states.every((s) => s === 'waiting')
        ? 'waiting'
        : states.every((s) => s === 'done')
          ? 'done'
          : 'running'
  }
  if (running) {
    const current = groups.findIndex((g) => g.state !== 'done')
    const at = current < 0 ? groups.length - 1 : current
    groups.forEach((g, i) => {
      if (i === at && g.state !== 'failed') g.state = 'running'
      else if (i > at && g.state !== 'failed') g.state = 'waiting'
    })
  }
  return groups
}

/** operationRunning says whether an operation in phase is still going: running, or being terminated. */
export function operationRunning(phase: string | null | undefined): boolean {
  return phase === 'Running' || phase === 'Terminating'
}

/** startedBy says who started an operation or deployment: " by NAME", " by auto-sync", or nothing. */
export function startedBy(i: { username: string; automated: boolean }): string {
  return i.username ? ` by ${i.username}` : i.automated ? ' by auto-sync' : ''
}
