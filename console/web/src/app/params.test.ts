import { describe, expect, it } from 'vitest'
import { paramProblems, paramsOf, sourcesOf, sourceType, withParams } from './params'

const helmSpec = {
  project: 'default',
  source: {
    repoURL: 'https://charts.example.com',
    chart: 'web',
    targetRevision: '1.2.3',
    helm: { valueFiles: ['prod.yaml'], parameters: [{ name: 'image.tag', value: 'v1' }], skipCrds: true },
  },
  destination: { namespace: 'web' },
}

describe('sourceType', () => {
  it('takes the reported type, else guesses from the spec', () => {
    expect(sourceType({}, 'Kustomize')).toBe('Kustomize')
    expect(sourceType({ chart: 'x' }, '')).toBe('Helm')
    expect(sourceType({ kustomize: {} }, 'Bogus')).toBe('Kustomize')
    expect(sourceType({ plugin: { name: 'p' } }, null)).toBe('Plugin')
    expect(sourceType({ path: 'x' }, undefined)).toBe('Directory')
  })
})

describe('paramsOf / withParams', () => {
  it('edits Helm parameters and keeps every other field', () => {
    const p = paramsOf(sourcesOf(helmSpec)[0]!, 'Helm')
    expect(p.helm).toEqual({ valueFiles: ['prod.yaml'], parameters: [{ name: 'image.tag', value: 'v1', forceString: false }], values: '', releaseName: '' })
    p.helm.parameters = [{ name: ' image.tag ', value: 'v2', forceString: false }, { name: 'port', value: '80', forceString: true }, { name: '', value: 'dropped', forceString: false }]
    p.helm.values = 'replicas: 3\n'
    const out = withParams(helmSpec, 0, p)
    expect(out).toEqual({
      ...helmSpec,
      source: {
        ...helmSpec.source,
        helm: { valueFiles: ['prod.yaml'], parameters: [{ name: 'image.tag', value: 'v2' }, { name: 'port', value: '80', forceString: true }], skipCrds: true, values: 'replicas: 3\n' },
      },
    })
    expect(helmSpec.source.helm.parameters[0]?.value).toBe('v1') // not mutated
  })
  it('edits Kustomize images, prefix and replicas of one source of several', () => {
    const spec = { sources: [{ repoURL: 'a', path: 'k' }, { repoURL: 'b', ref: 'values' }] }
    const p = paramsOf(sourcesOf(spec)[0]!, 'Kustomize')
    p.kustomize.namePrefix = 'prod-'
    p.kustomize.images = ['nginx=nginx:1.27', ' ']
    p.kustomize.replicas = [{ name: 'web', value: '3' }]
    expect(withParams(spec, 0, p)).toEqual({
      sources: [{ repoURL: 'a', path: 'k', kustomize: { namePrefix: 'prod-', images: ['nginx=nginx:1.27'], replicas: [{ name: 'web', count: 3 }] } }, { repoURL: 'b', ref: 'values' }],
    })
    expect(paramProblems({ ...p, kustomize: { ...p.kustomize, replicas: [{ name: 'web', value: 'many' }] } })).toEqual(['The replica count of web is not a whole number.'])
  })
  it('removes options left empty, and ignores a source that is not there', () => {
    const spec = { source: { repoURL: 'a', path: 'd', directory: { recurse: true } } }
    const p = paramsOf(spec.source, 'Directory')
    expect(p.directory).toEqual({ recurse: true, include: '', exclude: '' })
    p.directory.recurse = false
    expect(withParams(spec, 0, p)).toEqual({ source: { repoURL: 'a', path: 'd' } })
    expect(withParams(spec, 3, p)).toEqual(spec)
  })
  it('edits plugin env and checks the names', () => {
    const spec = { source: { repoURL: 'a', plugin: { name: 'cmp', parameters: [{ name: 'x', string: 'y' }] } } }
    const p = paramsOf(spec.source, 'Plugin')
    p.plugin.env = [{ name: 'FOO', value: 'bar' }]
    expect(withParams(spec, 0, p)).toEqual({ source: { repoURL: 'a', plugin: { name: 'cmp', parameters: [{ name: 'x', string: 'y' }], env: [{ name: 'FOO', value: 'bar' }] } } })
    expect(paramProblems({ ...p, plugin: { ...p.plugin, env: [{ name: '1-bad', value: '' }] } })).toEqual(['1-bad is not an environment variable name.'])
  })
  it('reads malformed options as empty', () => {
    const p = paramsOf({ helm: 'nope', kustomize: [1], directory: null, plugin: { env: 'x' } }, 'Helm')
    expect(p.helm.parameters).toEqual([])
    expect(p.kustomize.images).toEqual([])
    expect(p.plugin.env).toEqual([])
    expect(sourcesOf(null)).toEqual([])
  })
})
