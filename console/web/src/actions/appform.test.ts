import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { createdAppPath, editableManifest, formOf, fromYaml, formProblems, newManifest, toYaml, withForm } from './appform'

const helmApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
  namespace: graphcd
  labels:
    team: a
spec:
  project: web
  source:
    repoURL: https://charts.example.com
    chart: shop
    targetRevision: 1.2.0
    helm:
      values: |
        replicas: 2
  destination:
    name: prod
    namespace: shop
  syncPolicy:
    automated:
      prune: true
      selfHeal: false
    syncOptions:
      - CreateNamespace=true
  ignoreDifferences:
    - kind: Deployment
      jsonPointers: [/spec/replicas]
`

describe('form and YAML', () => {
  it('reads the form fields out of a manifest', () => {
    const got = fromYaml(helmApp)
    if ('error' in got) throw new Error(got.error)
    expect(formOf(got.manifest)).toEqual({
      name: 'shop',
      project: 'web',
      repoURL: 'https://charts.example.com',
      sourceKind: 'chart',
      path: '',
      chart: 'shop',
      targetRevision: '1.2.0',
      destinationBy: 'name',
      server: '',
      clusterName: 'prod',
      namespace: 'shop',
      autoSync: true,
      prune: true,
      selfHeal: false,
      syncOptions: ['CreateNamespace=true'],
    })
  })

  it('writes form changes back and keeps what the form does not show', () => {
    const got = fromYaml(helmApp)
    if ('error' in got) throw new Error(got.error)
    const f = { ...formOf(got.manifest), sourceKind: 'path' as const, repoURL: 'https://git.example.com/shop.git', path: 'deploy', autoSync: false, syncOptions: [] }
    const back = withForm(got.manifest, f)
    const again = fromYaml(toYaml(back))
    if ('error' in again) throw new Error(again.error)
    // Fields of a choice not taken (chart for a path, prune without auto-sync) are dropped.
    expect(formOf(again.manifest)).toEqual({ ...f, chart: '', prune: false })
    const spec = again.manifest.spec as Record<string, unknown>
    expect(spec.source).toEqual({ repoURL: 'https://git.example.com/shop.git', path: 'deploy', targetRevision: '1.2.0', helm: { values: 'replicas: 2\n' } })
    expect(spec.syncPolicy).toBeUndefined()
    expect(spec.ignoreDifferences).toEqual([{ kind: 'Deployment', jsonPointers: ['/spec/replicas'] }])
    expect((again.manifest.metadata as Record<string, unknown>).labels).toEqual({ team: 'a' })
    expect(got.manifest).toEqual(parse(helmApp)) // the original is not changed
  })

  it('turns auto-sync on with prune and self-heal, and destinations by server', () => {
    const f = { ...formOf(newManifest()), name: 'web', repoURL: 'https://git.example.com/a.git', path: 'web', namespace: 'web', autoSync: true, selfHeal: true }
    const m = withForm(newManifest(), f)
    expect(m.spec).toEqual({
      project: 'default',
      source: { repoURL: 'https://git.example.com/a.git', path: 'web', targetRevision: 'HEAD' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
      syncPolicy: { automated: { prune: false, selfHeal: true } },
    })
    expect(formProblems(f)).toEqual([])
  })

  it('edits the first source of a multi-source application', () => {
    const m = { kind: 'Application', metadata: { name: 'x' }, spec: { sources: [{ repoURL: 'a', path: 'p' }, { repoURL: 'b', ref: 'values' }], destination: { server: 's' } } }
    const out = withForm(m, { ...formOf(m), path: 'q' })
    expect((out.spec as Record<string, unknown>).sources).toEqual([{ repoURL: 'a', path: 'q' }, { repoURL: 'b', ref: 'values' }])
    expect((out.spec as Record<string, unknown>).source).toBeUndefined()
  })

  it('says why YAML is not an application', () => {
    expect(fromYaml('a: [')).toHaveProperty('error')
    expect(fromYaml('- 1')).toEqual({ error: 'The YAML must be one Application object (a mapping with apiVersion, kind, metadata and spec).' })
    expect(fromYaml('kind: Deployment')).toEqual({ error: 'kind is Deployment; it must be Application.' })
  })

  it('drops what only the server writes from an edited manifest', () => {
    const m = { apiVersion: 'v', kind: 'Application', metadata: { name: 'a', namespace: 'n', uid: 'u', resourceVersion: '3' }, spec: { project: 'p' }, status: { sync: {} } }
    expect(editableManifest(m)).toEqual({ apiVersion: 'v', kind: 'Application', metadata: { name: 'a', namespace: 'n' }, spec: { project: 'p' } })
  })

  it('names the fields still missing', () => {
    expect(formProblems({ ...formOf(newManifest()), name: 'Bad_Name', destinationBy: 'name' })).toEqual([
      'Name: lower-case letters, digits, "-" and "."; starting and ending with a letter or digit.',
      'Repository URL is required.',
      'Destination cluster is required.',
    ])
  })
})

describe('createdAppPath', () => {
  it('opens an app the server put in its own namespace by name', () => {
    expect(createdAppPath({ metadata: { name: 'web' } }, { name: 'web', namespace: 'graphcd' })).toBe('/applications/web')
  })
  it('opens an app created in a namespace of its own as NAMESPACE/NAME', () => {
    expect(createdAppPath({ metadata: { name: 'web', namespace: 'team-a' } }, { name: 'web', namespace: 'team-a' })).toBe('/applications/team-a/web')
  })
  it('takes the name and namespace the server answered', () => {
    expect(createdAppPath({ metadata: { name: 'web', namespace: 'team a' } }, { name: 'web-2', namespace: 'team a' })).toBe('/applications/team%20a/web-2')
  })
})
