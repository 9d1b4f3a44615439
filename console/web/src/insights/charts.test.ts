import { describe, expect, it } from 'vitest'
import { bars, duration, linePoints, percent, rangeOf, window } from './charts'

describe('insights charts', () => {
  it('reads durations as their two largest units', () => {
    expect(duration(0)).toBe('0 s')
    expect(duration(45)).toBe('45 s')
    expect(duration(1440)).toBe('24 min')
    expect(duration(4320)).toBe('1 h 12 min')
    expect(duration(10500)).toBe('2 h 55 min')
    expect(duration(3 * 86400 + 4 * 3600 + 5)).toBe('3 d 4 h')
    expect(duration(3600)).toBe('1 h')
  })

  it('reads ratios as percentages', () => {
    expect(percent(0.25)).toBe('25 %')
    expect(percent(0)).toBe('0 %')
  })

  it('offers 7, 30 and 90 days, 30 by default', () => {
    expect(rangeOf('90')).toBe(90)
    expect(rangeOf('12')).toBe(30)
    expect(rangeOf(null)).toBe(30)
  })

  it('ends the window at the next UTC midnight', () => {
    const now = Date.UTC(2026, 11, 6, 9, 30)
    expect(window(7, now)).toEqual({ from: '2026-11-30T00:00:00.000Z', to: '2026-12-07T00:00:00.000Z' })
  })

  it('scales bars to the largest value', () => {
    const b = bars([1, 2, 0], 30, 10)
    expect(b.map((x) => x.height)).toEqual([5, 10, 0])
    expect(b[1]?.y).toBe(0)
    expect(b[2]?.x).toBe(21)
    expect(bars([], 30, 10)).toEqual([])
  })

  it('draws lines through the slots with a sample', () => {
    expect(linePoints([null, 10, 5], 30, 10)).toBe('15,0 25,5')
  })
})
