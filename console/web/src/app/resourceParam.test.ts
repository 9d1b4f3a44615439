import { describe, expect, it } from 'vitest'
import { formatResource, parseResource, sameResource, withResource } from './resourceParam'

describe('resource parameter', () => {
  it('round-trips core, grouped and cluster-scoped objects', () => {
    for (const r of [
      { group: '', kind: 'Pod', namespace: 'default', name: 'web-1' },
      { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
      { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespace: '', name: 'view' },
    ]) {
      const back = parseResource(formatResource(r))
      expect(back && sameResource(back, r)).toBe(true)
    }
  })
  it('rejects what is not a resource', () => {
    expect(parseResource(null)).toBeNull()
    expect(parseResource('apps/Deployment/web')).toBeNull()
    expect(parseResource('apps//ns/web')).toBeNull()
    expect(parseResource('apps/Deployment/ns/')).toBeNull()
  })
  it('sets and clears the parameter, keeping the others', () => {
    const r = { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' }
    expect(withResource('?view=table', r)).toBe('?view=table&resource=apps%2FDeployment%2Fshop%2Fweb')
    expect(parseResource(new URLSearchParams(withResource('', r)).get('resource'))).toEqual(r)
    expect(withResource('?view=table&resource=x', null)).toBe('?view=table')
    expect(withResource('?resource=x', null)).toBe('')
  })
})
