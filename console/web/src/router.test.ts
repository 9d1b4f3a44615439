import { describe, expect, it } from 'vitest'
import { appLabel, appPath, appRef } from './router'

describe('application routes', () => {
  it('names an app of the server namespace by its name, others by namespace/name', () => {
    expect(appPath('web')).toBe('/applications/web')
    expect(appPath('web', null)).toBe('/applications/web')
    expect(appPath('web', 'team-a')).toBe('/applications/team-a/web')
    expect(appPath('a b', 'team/x')).toBe('/applications/team%2Fx/a%20b')
  })

  it('reads both forms back', () => {
    expect(appRef('/applications/web')).toEqual({ name: 'web', namespace: null })
    expect(appRef('/applications/web/')).toEqual({ name: 'web', namespace: null })
    expect(appRef('/applications/team-a/web')).toEqual({ name: 'web', namespace: 'team-a' })
    for (const [name, ns] of [['web', null], ['web', 'team-a'], ['a b', 'team/x']] as const) {
      expect(appRef(appPath(name, ns))).toEqual({ name, namespace: ns })
    }
  })

  it('is not fooled by other paths', () => {
    for (const p of ['/applications', '/applications/', '/applications/a/b/c', '/applications/%E0%A4%A', '/applications/ns/%E0%A4%A', '/settings/web']) {
      expect(appRef(p)).toBeNull()
    }
  })

  it('labels apps outside the server namespace with it', () => {
    expect(appLabel({ name: 'web', namespace: 'graphcd' }, 'graphcd')).toBe('web')
    expect(appLabel({ name: 'web', namespace: 'team-a' }, 'graphcd')).toBe('team-a/web')
    expect(appLabel({ name: 'web', namespace: 'team-a' }, null)).toBe('web')
  })
})
