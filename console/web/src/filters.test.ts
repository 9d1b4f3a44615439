import { describe, expect, it } from 'vitest'
import { emptyView, formatView, parseView, toFilter, toOrder, type ListView } from './filters'

describe('view <-> query string', () => {
  const views: [string, ListView][] = [
    ['empty', emptyView],
    [
      'everything',
      {
        projects: ['shop', 'web team'],
        sync: ['OutOfSync'],
        health: ['Degraded', 'Missing'],
        namespaces: ['prod'],
        search: 'guest book',
        autoSync: false,
        sort: '-lastDeployed',
        layout: 'tiles',
      },
    ],
    ['auto-sync on', { ...emptyView, autoSync: true, sort: 'health' }],
  ]
  it.each(views)('%s round-trips', (_, v) => {
    expect(parseView('?' + formatView(v))).toEqual(v)
  })

  it('leaves defaults out of the URL', () => {
    expect(formatView(emptyView)).toBe('')
    expect(formatView({ ...emptyView, health: ['Healthy'] })).toBe('health=Healthy')
  })

  it('drops unknown, empty and repeated values', () => {
    expect(parseView('?health=Healthy&health=Bogus&health=Healthy&sync=&project=%20a%20&auto=maybe&sort=size&view=grid')).toEqual({
      ...emptyView,
      health: ['Healthy'],
      projects: ['a'],
    })
  })
})

describe('toFilter', () => {
  it('omits what the view does not filter on', () => {
    expect(toFilter(emptyView)).toEqual({})
  })
  it('maps each filter to the server field', () => {
    expect(
      toFilter({ ...emptyView, projects: ['p'], sync: ['Synced'], health: ['Healthy'], namespaces: ['ns'], search: ' x ', autoSync: false }),
    ).toEqual({ projects: ['p'], syncStatus: ['Synced'], health: ['Healthy'], destinationNamespaces: ['ns'], search: 'x', autoSync: false })
  })
})

describe('toOrder', () => {
  it.each([
    ['name', { field: 'NAME', direction: 'ASC' }],
    ['-name', { field: 'NAME', direction: 'DESC' }],
    ['health', { field: 'HEALTH', direction: 'ASC' }],
    ['-lastDeployed', { field: 'LAST_DEPLOYED', direction: 'DESC' }],
  ] as const)('%s', (sort, want) => {
    expect(toOrder(sort)).toEqual(want)
  })
})
