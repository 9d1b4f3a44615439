import { describe, expect, it } from 'vitest'
import { groupProgress, operationRunning, startedBy, type ProgressResult } from './progress'

function res(name: string, syncPhase: string, syncWave: number, hookPhase: string, extra: Partial<ProgressResult> = {}): ProgressResult {
  return { group: '', kind: 'ConfigMap', namespace: 'ns', name, status: hookPhase === '' ? '' : 'Synced', message: '', hookType: '', hookPhase, syncPhase, syncWave, ...extra }
}

function summary(running: boolean, results: ProgressResult[]) {
  return groupProgress(results, running).map((g) => `${g.phase}/${g.wave}:${g.state}:${g.results.map((r) => `${r.result.name}=${r.state}`).join(',')}`)
}

describe('groupProgress', () => {
  it('orders groups by phase then wave and marks the first unfinished one running', () => {
    const results = [
      res('late', 'Sync', 5, ''),
      res('db', 'Sync', -1, 'Succeeded'),
      res('migrate', 'PreSync', 0, 'Succeeded', { hookType: 'PreSync' }),
      res('web', 'Sync', 0, 'Running'), // applied; not a hook, so done
      res('api', 'Sync', 0, ''),
      res('smoke', 'PostSync', 0, '', { hookType: 'PostSync' }),
    ]
    expect(summary(true, results)).toEqual([
      'PreSync/0:done:migrate=done',
      'Sync/-1:done:db=done',
      'Sync/0:running:web=done,api=waiting',
      'Sync/5:waiting:late=waiting',
      'PostSync/0:waiting:smoke=waiting',
    ])
  })

  it('keeps the last group running while it settles, and shows running hooks', () => {
    expect(summary(true, [res('a', 'Sync', 0, 'Succeeded'), res('b', 'Sync', 1, 'Succeeded')])).toEqual([
      'Sync/0:done:a=done',
      'Sync/1:running:b=done',
    ])
    expect(summary(true, [res('job', 'PreSync', 0, 'Running', { hookType: 'PreSync' }), res('a', 'Sync', 0, '')])).toEqual([
      'PreSync/0:running:job=running',
      'Sync/0:waiting:a=waiting',
    ])
  })

  it('marks failures and, once the operation ended, judges groups by their results', () => {
    const results = [res('a', 'Sync', 0, 'Failed', { status: 'SyncFailed' }), res('b', 'Sync', 0, 'Succeeded'), res('c', 'Sync', 2, 'Succeeded')]
    expect(summary(false, results)).toEqual(['Sync/0:failed:a=failed,b=done', 'Sync/2:done:c=done'])
    expect(summary(false, [res('x', '', 0, 'Succeeded', { status: 'Pruned' })])).toEqual(['Sync/0:done:x=done'])
  })
})

describe('operationRunning', () => {
  it('counts a terminating operation as still going', () => {
    expect(['Running', 'Terminating', 'Succeeded', 'Failed', '', null, undefined].map(operationRunning)).toEqual([true, true, false, false, false, false, false])
  })
})

describe('startedBy', () => {
  it('names the user, else auto-sync, else nobody', () => {
    expect(startedBy({ username: 'alice', automated: true })).toBe(' by alice')
    expect(startedBy({ username: '', automated: true })).toBe(' by auto-sync')
    expect(startedBy({ username: '', automated: false })).toBe('')
  })
})
