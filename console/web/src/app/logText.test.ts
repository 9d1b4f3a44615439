import { describe, expect, it } from 'vitest'
import { appendLines, containersFromError, countMatches, splitMatches } from './logText'

describe('appendLines', () => {
  it('keeps the newest lines', () => {
    expect(appendLines(['a', 'b'], ['c'], 5)).toEqual(['a', 'b', 'c'])
    expect(appendLines(['a', 'b', 'c'], ['d', 'e'], 3)).toEqual(['c', 'd', 'e'])
  })
})

describe('splitMatches', () => {
  it('marks every case-insensitive match', () => {
    expect(splitMatches('Error: an error', 'error')).toEqual([
      { text: 'Error', match: true },
      { text: ': an ', match: false },
      { text: 'error', match: true },
    ])
  })
  it('returns the line whole without a query or a match', () => {
    expect(splitMatches('hello', '')).toEqual([{ text: 'hello', match: false }])
    expect(splitMatches('hello', 'x')).toEqual([{ text: 'hello', match: false }])
    expect(splitMatches('', 'x')).toEqual([{ text: '', match: false }])
  })
  it('counts lines that match', () => {
    expect(countMatches(['GET /', 'post /', 'GET /x'], 'get')).toBe(2)
    expect(countMatches(['a'], '')).toBe(0)
  })
})

describe('containersFromError', () => {
  it('reads the names Kubernetes offers', () => {
    expect(containersFromError('a container name must be specified for pod web-1, choose one of: [app sidecar]')).toEqual(['app', 'sidecar'])
    expect(containersFromError('pod not found')).toEqual([])
  })
})
