import { describe, expect, it } from 'vitest'
import { parseChoice, resolveTheme } from './theme'

describe('theme', () => {
  it('follows the system unless light or dark was chosen', () => {
    expect(resolveTheme('system', true)).toBe('dark')
    expect(resolveTheme('system', false)).toBe('light')
    expect(resolveTheme('light', true)).toBe('light')
    expect(resolveTheme('dark', false)).toBe('dark')
  })

  it('reads anything unknown in storage as system', () => {
    expect(parseChoice('dark')).toBe('dark')
    expect(parseChoice('light')).toBe('light')
    for (const v of [null, undefined, '', 'DARK', 'blue']) expect(parseChoice(v)).toBe('system')
  })
})
