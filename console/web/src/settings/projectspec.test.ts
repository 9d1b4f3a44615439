import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { addRole, addTo, newerThan, newProjectManifest, removeAt, specOf, specText, syncWindow, withRole, type WindowForm } from './projectspec'

const project = `apiVersion: graphcd.io/v1alpha1
kind: AppProject
metadata:
  name: web
  namespace: graphcd
spec:
  sourceRepos: ['https://git.example.com/*']
  destinations:
    - server: https://kubernetes.default.svc
      namespace: web
  roles:
    - name: ci
      policies: ['p, proj:web:ci, applications, sync, web/*, allow']
      jwtTokens:
        - id: t1
          iat: 1700000000
  orphanedResources:
    warn: true
`

describe('project spec edits', () => {
  it('adds and removes list items, keeping the rest of the spec', () => {
    const spec = specOf(project)
    const added = addTo(spec, 'destinations', { server: '*', namespace: 'web-*' })
    expect(addTo(added, 'destinations', { server: '*', namespace: 'web-*' })).toBe(added) // no duplicates
    const removed = removeAt(added, 'destinations', 0)
    expect(parse(specText(removed))).toEqual({
      sourceRepos: ['https://git.example.com/*'],
      destinations: [{ server: '*', namespace: 'web-*' }],
      roles: [{ name: 'ci', policies: ['p, proj:web:ci, applications, sync, web/*, allow'], jwtTokens: [{ id: 't1', iat: 1700000000 }] }],
      orphanedResources: { warn: true },
    })
    expect(removeAt(spec, 'sourceRepos', 0)).not.toHaveProperty('sourceRepos')
    expect(spec.destinations).toHaveLength(1) // the original is unchanged
  })

  it('adds roles and edits one role, keeping its tokens', () => {
    const spec = specOf(project)
    expect(addRole(spec, 'ci', '')).toEqual({ error: 'The project has a role ci already.' })
    expect(addRole(spec, 'bad name', '')).toHaveProperty('error')
    const next = addRole(spec, 'viewers', 'read only')
    if ('error' in next) throw new Error(String(next.error))
    const edited = withRole(next, 'ci', (r) => addTo(r, 'groups', 'ci-bots'))
    expect(edited.roles).toEqual([
      { name: 'ci', policies: ['p, proj:web:ci, applications, sync, web/*, allow'], jwtTokens: [{ id: 't1', iat: 1700000000 }], groups: ['ci-bots'] },
      { name: 'viewers', description: 'read only' },
    ])
  })

  it('builds sync windows and says what is wrong', () => {
    const f: WindowForm = { kind: 'deny', schedule: '0 22 * * *', duration: '8h', applications: 'web-*, api', namespaces: '', clusters: '', manualSync: true, timeZone: 'Europe/Paris' }
    expect(syncWindow(f)).toEqual({ kind: 'deny', schedule: '0 22 * * *', duration: '8h', applications: ['web-*', 'api'], manualSync: true, timeZone: 'Europe/Paris' })
    expect(syncWindow({ ...f, schedule: '0 22 *' })).toHaveProperty('error')
    expect(syncWindow({ ...f, duration: '8 hours' })).toHaveProperty('error')
    expect(syncWindow({ ...f, applications: ' , ' })).toEqual({ error: 'Name the applications, namespaces or clusters the window applies to.' })
  })

  it('writes a new project that may deploy anything anywhere', () => {
    expect(parse(newProjectManifest('web', 'the shop'))).toEqual({
      apiVersion: 'graphcd.io/v1alpha1',
      kind: 'AppProject',
      metadata: { name: 'web' },
      spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], description: 'the shop' },
    })
  })
})

describe('newerThan', () => {
  const at = (rv: string) => `apiVersion: graphcd.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: shop\n  resourceVersion: "${rv}"\n`
  it('compares resource versions as numbers', () => {
    expect(newerThan(at('10'), at('9'))).toBe(true)
    expect(newerThan(at('9'), at('10'))).toBe(false)
    expect(newerThan(at('10'), at('10'))).toBe(false)
    expect(newerThan(at('10'), at('10'), true)).toBe(true)
  })
  it('is false without a version', () => {
    expect(newerThan('kind: AppProject\n', at('1'), true)).toBe(false)
    expect(newerThan(at('x1'), at('1'), true)).toBe(false)
  })
})
