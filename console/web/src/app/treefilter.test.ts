import { describe, expect, it } from 'vitest'
import type { TreeResource } from './tree'
import { applyTreeFilter, emptyTreeFilter, filterCount, kindCounts, orphanResources, parseTreeFilter, withTreeFilter, type TreeFilter } from './treefilter'

function res(kind: string, name: string, health?: string, sync?: string): TreeResource {
  return { group: '', kind, namespace: 'ns', name, uid: `${kind}/${name}`, parentRefs: [], health: health ? { status: health, message: '' } : null, sync: sync ?? null, info: [], images: [], missing: false }
}

const tree = [res('Deployment', 'web', 'Healthy', 'Synced'), res('Service', 'web', 'Healthy', 'OutOfSync'), res('Pod', 'web-1', 'Degraded')]
const orphans = orphanResources([
  { group: '', kind: 'ConfigMap', namespace: 'ns', name: 'stray' },
  { group: '', kind: '', namespace: 'ns', name: 'no-kind' },
  null as unknown as { group: string; kind: string; namespace: string; name: string },
])

describe('parseTreeFilter / withTreeFilter', () => {
  it('round-trips a filter and keeps the page’s other keys', () => {
    const f: TreeFilter = { kinds: ['Pod', 'Service'], sync: ['OutOfSync'], health: ['Degraded'], orphans: 'show' }
    const s = withTreeFilter('?view=table&resource=x&kind=Old', f)
    expect(s).toBe('?view=table&resource=x&kind=Pod&kind=Service&sync=OutOfSync&health=Degraded&orphans=show')
    expect(parseTreeFilter(s)).toEqual(f)
  })
  it('drops unknown values and leaves the defaults out of the URL', () => {
    expect(parseTreeFilter('?sync=Bogus&health=Healthy&health=Healthy&orphans=all&kind=%20')).toEqual({ ...emptyTreeFilter, health: ['Healthy'] })
    expect(withTreeFilter('?view=pods', emptyTreeFilter)).toBe('?view=pods')
    expect(withTreeFilter('kind=Pod', emptyTreeFilter)).toBe('')
  })
  it('counts the filters set', () => {
    expect(filterCount(emptyTreeFilter)).toBe(0)
    expect(filterCount({ kinds: ['Pod'], sync: [], health: ['Healthy', 'Degraded'], orphans: 'only' })).toBe(4)
  })
})

describe('orphanResources', () => {
  it('makes top-level, status-less, orphaned entries and skips bad data', () => {
    expect(orphans).toHaveLength(1)
    expect(orphans[0]).toMatchObject({ kind: 'ConfigMap', name: 'stray', uid: '', parentRefs: [], orphaned: true, missing: false, sync: null })
    expect(orphanResources(undefined)).toEqual([])
  })
})

describe('applyTreeFilter', () => {
  const names = (rs: TreeResource[]) => rs.map((r) => `${r.kind}/${r.name}`)
  it('hides orphans by default, shows them beside or alone', () => {
    expect(names(applyTreeFilter(tree, orphans, emptyTreeFilter))).toEqual(['Deployment/web', 'Service/web', 'Pod/web-1'])
    expect(names(applyTreeFilter(tree, orphans, { ...emptyTreeFilter, orphans: 'show' }))).toContain('ConfigMap/stray')
    expect(names(applyTreeFilter(tree, orphans, { ...emptyTreeFilter, orphans: 'only' }))).toEqual(['ConfigMap/stray'])
  })
  it('keeps a resource when any value of each filter set matches', () => {
    expect(names(applyTreeFilter(tree, orphans, { ...emptyTreeFilter, kinds: ['Pod', 'Service'] }))).toEqual(['Service/web', 'Pod/web-1'])
    expect(names(applyTreeFilter(tree, orphans, { ...emptyTreeFilter, health: ['Healthy'], sync: ['OutOfSync'] }))).toEqual(['Service/web'])
    // Orphans have no status: a status filter leaves them out.
    expect(names(applyTreeFilter(tree, orphans, { ...emptyTreeFilter, orphans: 'show', health: ['Degraded'] }))).toEqual(['Pod/web-1'])
  })
})

describe('kindCounts', () => {
  it('counts each kind, sorted by name', () => {
    expect(kindCounts([...tree, res('Pod', 'web-2'), ...orphans])).toEqual([
      ['ConfigMap', 1],
      ['Deployment', 1],
      ['Pod', 2],
      ['Service', 1],
    ])
  })
})
