import { describe, expect, it } from 'vitest'
import { optional, splitList } from './input'

describe('splitList', () => {
  it('keeps the non-empty items, trimmed', () => {
    expect(splitList(' a, b ,,c , ')).toEqual(['a', 'b', 'c'])
    expect(splitList('')).toEqual([])
  })
})

describe('optional', () => {
  it('is undefined for blank text and trimmed otherwise', () => {
    expect(optional('  ')).toBeUndefined()
    expect(optional(' x ')).toBe('x')
  })
})
