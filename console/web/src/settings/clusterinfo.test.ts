import { describe, expect, it } from 'vitest'
import { clusterConnection, clusterFigures } from './clusterinfo'

const info = {
  serverVersion: 'v1.35.0',
  connectionState: { status: 'SUCCESSFUL', message: '', attemptedAt: '2026-12-06T09:00:00Z' },
  cacheInfo: { resourcesCount: 412, apisCount: 61, lastCacheSyncTime: '2026-12-06T09:00:01Z' },
  applicationsCount: 1,
}

describe('clusterConnection', () => {
  it('words the three states and a missing report', () => {
    expect(clusterConnection(info)).toEqual({ state: 'ok', text: 'Successful' })
    expect(clusterConnection({ ...info, connectionState: { status: 'FAILED', message: 'connection refused' } })).toEqual({ state: 'failed', text: 'Failed: connection refused' })
    expect(clusterConnection({ ...info, connectionState: { status: 'UNKNOWN', message: 'not monitored' } }).state).toBe('unknown')
    expect(clusterConnection(null).state).toBe('unknown')
  })
})

describe('clusterFigures', () => {
  it('lists version, apps and cache', () => {
    const f = clusterFigures(info)
    expect(f[0]).toBe('Kubernetes v1.35.0')
    expect(f[1]).toBe('1 app')
    expect(f[2]).toBe('412 resources, 61 APIs cached')
  })
  it('leaves out the cache of a cluster whose cache never ran', () => {
    expect(clusterFigures({ ...info, serverVersion: '', applicationsCount: 2, cacheInfo: { resourcesCount: 0, apisCount: 0, lastCacheSyncTime: null } })).toEqual(['2 apps'])
  })
})
