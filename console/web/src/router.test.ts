import { describe, expect, it } from 'vitest'
import { appLabel, appPath, appRef, setPath, setRef } from './router'

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

describe('ApplicationSet routes', () => {
  it('names a set as an app is named, under /applicationsets', () => {
    expect(setPath('fleet')).toBe('/applicationsets/fleet')
    expect(setPath('fleet', 'team-a')).toBe('/applicationsets/team-a/fleet')
    for (const [name, ns] of [['fleet', null], ['fleet', 'team-a'], ['a b', 'team/x']] as const) {
      expect(setRef(setPath(name, ns))).toEqual({ name, namespace: ns })
    }
  })

  it('keeps the two kinds apart', () => {
    expect(appRef('/applicationsets/fleet')).toBeNull()
    expect(setRef('/applications/fleet')).toBeNull()
    for (const p of ['/applicationsets', '/applicationsets/', '/applicationsets/a/b/c']) expect(setRef(p)).toBeNull()
  })
})
