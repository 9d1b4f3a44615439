import { parse } from 'graphql'
import { describe, expect, it } from 'vitest'
import { Permissions, appObject, canAnswers, canQuery } from './permissions'

describe('appObject', () => {
  it('leaves the namespace out in the server namespace only', () => {
    expect(appObject({ project: 'shop', namespace: 'graphcd', name: 'web' }, 'graphcd')).toBe('shop/web')
    expect(appObject({ project: 'shop', namespace: 'team-a', name: 'web' }, 'graphcd')).toBe('shop/team-a/web')
  })
})

describe('canQuery', () => {
  it('is valid GraphQL with one aliased field per object, quotes escaped', () => {
    const q = canQuery('applications', 'sync', ['a/b', 'we"ird\\/x'])
    const doc = parse(q)
    expect(doc.definitions).toHaveLength(1)
    expect(q).toContain('c0: can(resource: "applications", action: "sync", object: "a/b")')
    expect(q).toContain('c1: can(resource: "applications", action: "sync", object: "we\\"ird\\\\/x")')
  })

  it('maps answers back, treating missing ones as no', () => {
    const got = canAnswers(['a', 'b', 'c'], { c0: true, c1: false })
    expect([...got]).toEqual([
      ['a', true],
      ['b', false],
      ['c', false],
    ])
    expect(canAnswers(['a'], null).get('a')).toBe(false)
  })
})

describe('Permissions', () => {
  it('asks once per batch and never twice for an object', async () => {
    const asked: string[][] = []
    const p = new Permissions(async (objects) => {
      asked.push(objects)
      return new Map(objects.map((o) => [o, o.startsWith('ok/')]))
    })
    let changes = 0
    p.subscribe(() => changes++)
    expect(p.get('ok/a')).toBeUndefined()
    expect(p.get('no/b')).toBeUndefined()
    expect(p.get('ok/a')).toBeUndefined()
    await new Promise((r) => setTimeout(r, 10))
    expect(asked).toEqual([['ok/a', 'no/b']])
    expect(changes).toBe(1)
    expect(p.get('ok/a')).toBe(true)
    expect(p.get('no/b')).toBe(false)
    await new Promise((r) => setTimeout(r, 10))
    expect(asked).toHaveLength(1)
  })

  it('hides the control when the server cannot answer', async () => {
    const p = new Permissions(async () => {
      throw new Error('down')
    })
    p.get('x')
    await new Promise((r) => setTimeout(r, 10))
    expect(p.get('x')).toBe(false)
  })
})
