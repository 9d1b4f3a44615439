import { describe, expect, it } from 'vitest'
import { healthBadge, operationBadge, syncBadge } from './badges'

describe('badges', () => {
  it.each([
    ['Synced', 'ok'],
    ['OutOfSync', 'warn'],
    ['Unknown', 'muted'],
  ])('sync %s is %s', (status, tone) => {
    expect(syncBadge(status)).toMatchObject({ label: status, tone })
  })

  it.each([
    ['Healthy', 'ok'],
    ['Progressing', 'busy'],
    ['Degraded', 'bad'],
    ['Suspended', 'muted'],
    ['Missing', 'warn'],
    ['Unknown', 'muted'],
  ])('health %s is %s', (status, tone) => {
    expect(healthBadge(status)).toMatchObject({ label: status, tone })
  })

  it('shows anything unexpected as Unknown', () => {
    for (const s of ['', null, undefined, 'toString', 'Exploded']) {
      expect(syncBadge(s).label).toBe('Unknown')
      expect(healthBadge(s).label).toBe('Unknown')
    }
  })

  it('shows an operation only when one ran', () => {
    expect(operationBadge(null)).toBeNull()
    expect(operationBadge('')).toBeNull()
    expect(operationBadge('Running')).toMatchObject({ tone: 'busy' })
    expect(operationBadge('Failed')).toMatchObject({ tone: 'bad' })
    expect(operationBadge('Succeeded')).toMatchObject({ tone: 'ok' })
    expect(operationBadge('Paused')).toMatchObject({ label: 'Paused', tone: 'muted' })
  })
})
