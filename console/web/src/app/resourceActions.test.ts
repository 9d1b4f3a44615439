import { describe, expect, it } from 'vitest'
import { actionRight, changesText, paramInputs, paramProblem } from './resourceActions'

describe('resource actions', () => {
  it('names the RBAC action as Argo CD does, the core group empty', () => {
    expect(actionRight('apps', 'Deployment', 'restart')).toBe('action/apps/Deployment/restart')
    expect(actionRight('', 'Pod', 'evict')).toBe('action//Pod/evict')
  })
  it('checks values by type', () => {
    const p = (type: string) => ({ name: 'n', type, default: '' })
    expect(paramProblem(p('integer'), '3')).toBeNull()
    expect(paramProblem(p('integer'), '3.5')).toMatch(/whole number/)
    expect(paramProblem(p('integer'), '')).toMatch(/whole number/)
    expect(paramProblem(p('number'), '0.5')).toBeNull()
    expect(paramProblem(p('number'), 'many')).toMatch(/a number/)
    expect(paramProblem(p('boolean'), 'true')).toBeNull()
    expect(paramProblem(p('boolean'), 'yes')).toMatch(/true or false/)
    expect(paramProblem(p('string'), '')).toBeNull()
  })
  it('sends every parameter, defaults for those left alone', () => {
    const params = [
      { name: 'replicas', type: 'integer', default: '1' },
      { name: 'mode', type: 'string', default: 'prod' },
    ]
    expect(paramInputs(params, { replicas: ' 3 ' })).toEqual([
      { name: 'replicas', value: '3' },
      { name: 'mode', value: 'prod' },
    ])
  })
  it('tells what a run wrote', () => {
    expect(changesText([])).toBe('nothing was written')
    expect(
      changesText([
        { operation: 'PATCH', kind: 'CronJob', namespace: 'shop', name: 'report' },
        { operation: 'CREATE', kind: 'Job', namespace: 'shop', name: 'report-1' },
      ]),
    ).toBe('patched CronJob report, created Job report-1')
  })
})
