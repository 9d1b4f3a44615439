import { describe, expect, it } from 'vitest'
import { changeSummary, defaultDiffMode, lineChanges, manifestText } from './diffText'

describe('manifestText', () => {
  it('ends text in one newline and turns absence into empty text', () => {
    expect(manifestText(null)).toBe('')
    expect(manifestText(undefined)).toBe('')
    expect(manifestText('a: 1')).toBe('a: 1\n')
    expect(manifestText('a: 1\n')).toBe('a: 1\n')
  })
})

describe('lineChanges', () => {
  it('counts nothing for equal texts', () => {
    expect(lineChanges('a: 1\nb: 2\n', 'a: 1\nb: 2\n')).toEqual({ added: 0, removed: 0 })
  })
  it('counts a changed line as one removed and one added', () => {
    const live = 'spec:\n  replicas: 3\n  paused: false\n'
    const desired = 'spec:\n  replicas: 2\n  paused: false\n'
    expect(lineChanges(live, desired)).toEqual({ added: 1, removed: 1 })
  })
  it('counts lines present on one side only', () => {
    expect(lineChanges('', 'a: 1\nb: 2\n')).toEqual({ added: 2, removed: 0 })
    expect(lineChanges('a: 1\nb: 2\nc: 3\n', 'a: 1\n')).toEqual({ added: 0, removed: 2 })
  })
  it('treats repeated lines as the same line', () => {
    expect(lineChanges('x\nx\nx\n', 'x\nx\n')).toEqual({ added: 0, removed: 1 })
  })
  it('gives up on more distinct lines than it can encode', () => {
    const many = Array.from({ length: 70000 }, (_, i) => `k${i}: v`).join('\n')
    expect(lineChanges(many, '')).toBeNull()
  })
  it('counts past the surrogate range', () => {
    const n = 60000
    const live = Array.from({ length: n }, (_, i) => `k${i}`).join('\n')
    expect(lineChanges(live, `${live}\nextra`)).toEqual({ added: 1, removed: 0 })
  })
})

describe('changeSummary', () => {
  it('says what differs', () => {
    expect(changeSummary({ added: 0, removed: 0 })).toBe('Live and desired are the same.')
    expect(changeSummary({ added: 1, removed: 2 })).toBe('2 lines only live, 1 line only desired.')
    expect(changeSummary(null)).toBe('Too large to count changed lines.')
  })
})

describe('defaultDiffMode', () => {
  it('is inline on a phone and side by side on a laptop', () => {
    expect(defaultDiffMode(390)).toBe('inline')
    expect(defaultDiffMode(1280)).toBe('split')
  })
})
