import { describe, expect, it } from 'vitest'
import { mentions, shortRevision } from './text'

describe('shortRevision', () => {
  it('shortens commit SHAs only', () => {
    expect(shortRevision('0123456789abcdef0123456789abcdef01234567')).toBe('0123456')
    expect(shortRevision('v1.2.3')).toBe('v1.2.3')
    expect(shortRevision('')).toBe('')
  })
})

describe('mentions', () => {
  const web1 = { group: '', kind: 'Pod', namespace: 'shop', name: 'web-1' }
  it('finds kind/name and the name as a word', () => {
    expect(mentions('Sync: Pod/web-1 configured', web1)).toBe(true)
    expect(mentions('web-1 is Healthy', web1)).toBe(true)
    expect(mentions('deleted (web-1)', web1)).toBe(true)
  })
  it('does not find the name inside another', () => {
    expect(mentions('web-12 is Healthy', web1)).toBe(false)
    expect(mentions('my.web-1.svc', web1)).toBe(false)
  })
  it('treats the name literally', () => {
    expect(mentions('a+b updated', { ...web1, name: 'a+b' })).toBe(true)
    expect(mentions('aab updated', { ...web1, name: 'a+b' })).toBe(false)
  })
})
