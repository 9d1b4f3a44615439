import { describe, expect, it } from 'vitest'
import { connectionStatus } from './Repositories'

describe('connectionStatus', () => {
  it('says a successful test succeeded', () => {
    const st = connectionStatus({ status: 'SUCCESSFUL', message: '', attemptedAt: '2026-11-30T08:00:00Z' })
    expect(st.ok).toBe(true)
    expect(st.text).toMatch(/^Connection successful \(tested .+\)$/)
  })
  it('gives the reason of a failed test', () => {
    const st = connectionStatus({ status: 'FAILED', message: 'authentication required', attemptedAt: '2026-11-30T08:00:00Z' })
    expect(st.ok).toBe(false)
    expect(st.text).toContain('authentication required')
  })
})
