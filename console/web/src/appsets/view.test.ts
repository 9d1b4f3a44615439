import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { actionBadge, generatorsSummary, newSetManifest, previewName, rolloutBadge, rolloutSteps, setState } from './view'

describe('generatorsSummary', () => {
  it.each([
    ['[{"list":{"elements":[{"env":"dev"},{"env":"prod"}]}}]', 'list (2 elements)'],
    ['[{"list":{"elements":[{"env":"dev"}]}}]', 'list (1 element)'],
    ['[{"list":{"elementsYaml":"{{.x}}"}}]', 'list'],
    ['[{"clusters":{"selector":{}}},{"git":{"repoURL":"r","files":[{"path":"a.json"}]}}]', 'clusters, git files'],
    ['[{"matrix":{"generators":[{"git":{"directories":[{"path":"*"}]}},{"clusters":{}}]}}]', 'matrix (git directories, clusters)'],
    ['[{"selector":{"matchLabels":{"a":"b"}},"pullRequest":{}}]', 'pullRequest'],
    ['[]', 'none'],
    ['not json', 'not json'],
    ['{"list":{}}', '{"list":{}}'],
  ])('%s reads as %s', (json, want) => {
    expect(generatorsSummary(json)).toBe(want)
  })
})

describe('setState', () => {
  const c = (type: string, status: string, message = `${type} ${status}`) => ({ type, status, message })

  it('puts an error before everything else', () => {
    const s = setState([c('ResourcesUpToDate', 'True'), c('ErrorOccurred', 'True', '1 of 2 elements failed')])
    expect(s.badge.label).toBe('Error')
    expect(s.badge.tone).toBe('bad')
    expect(s.message).toBe('1 of 2 elements failed')
  })

  it('then a rollout under way, then up to date', () => {
    expect(setState([c('ErrorOccurred', 'False'), c('ResourcesUpToDate', 'True'), c('RolloutProgressing', 'True')]).badge.label).toBe('Progressing')
    expect(setState([c('ErrorOccurred', 'False'), c('ResourcesUpToDate', 'True')]).badge.label).toBe('Up to date')
  })

  it('is Pending before the controller wrote any condition, Unknown when none holds', () => {
    expect(setState([]).badge.label).toBe('Pending')
    const s = setState([c('ResourcesUpToDate', 'False', 'waiting for the generators')])
    expect(s.badge.label).toBe('Unknown')
    expect(s.message).toBe('waiting for the generators')
  })
})

describe('rolloutSteps', () => {
  it('groups by step in numeric order, the unselected last, keeping the order within a step', () => {
    const p = (application: string, step: string) => ({ application, step, status: 'Waiting' })
    const steps = rolloutSteps([p('a', '10'), p('b', '2'), p('c', ''), p('d', '2'), p('e', '1')])
    expect(steps.map((s) => [s.step, s.apps.map((a) => a.application)])).toEqual([
      ['1', ['e']],
      ['2', ['b', 'd']],
      ['10', ['a']],
      ['', ['c']],
    ])
    expect(rolloutSteps([])).toEqual([])
  })
})

describe('badges', () => {
  it('read every action and progress, and anything else as itself', () => {
    expect(actionBadge('Failed').tone).toBe('bad')
    expect(actionBadge('Created').tone).toBe('ok')
    expect(actionBadge('Renamed')).toEqual({ label: 'Renamed', tone: 'muted', symbol: '?' })
    expect(rolloutBadge('Healthy').tone).toBe('ok')
    expect(rolloutBadge('Progressing').tone).toBe('busy')
    expect(rolloutBadge('').label).toBe('Unknown')
  })
})

describe('previewName', () => {
  it('is the Application, or where the element came from when it has none', () => {
    expect(previewName({ generator: 0, params: '{"env":"dev"}', application: { name: 'web-dev' } })).toBe('web-dev')
    expect(previewName({ generator: 1, params: '{"env":"bad"}', application: null })).toBe('generator 1: {"env":"bad"}')
  })
})

describe('newSetManifest', () => {
  it('is an ApplicationSet with a list generator and a template', () => {
    const m = parse(newSetManifest()) as { kind: string; spec: { generators: unknown[]; template: { spec: { project: string } } } }
    expect(m.kind).toBe('ApplicationSet')
    expect(m.spec.generators).toHaveLength(1)
    expect(m.spec.template.spec.project).toBe('default')
  })
})
