// How sync, health and operation states look. Events carry them as plain
// strings, so anything unknown shows as Unknown rather than breaking.

/** Tone picks the badge colour; every badge also has a symbol and a word. */
export type Tone = 'ok' | 'warn' | 'bad' | 'busy' | 'muted'

export interface Badge {
  label: string
  tone: Tone
  symbol: string
}

const sync: Record<string, Badge> = {
  Synced: { label: 'Synced', tone: 'ok', symbol: '✓' },
  OutOfSync: { label: 'OutOfSync', tone: 'warn', symbol: '↻' },
  Unknown: { label: 'Unknown', tone: 'muted', symbol: '?' },
}

const health: Record<string, Badge> = {
  Healthy: { label: 'Healthy', tone: 'ok', symbol: '♥' },
  Progressing: { label: 'Progressing', tone: 'busy', symbol: '◌' },
  Degraded: { label: 'Degraded', tone: 'bad', symbol: '✕' },
  Suspended: { label: 'Suspended', tone: 'muted', symbol: '⏸' },
  Missing: { label: 'Missing', tone: 'warn', symbol: '∅' },
  Unknown: { label: 'Unknown', tone: 'muted', symbol: '?' },
}

const operation: Record<string, Badge> = {
  Running: { label: 'Syncing', tone: 'busy', symbol: '◌' },
  Terminating: { label: 'Terminating', tone: 'busy', symbol: '◌' },
  Failed: { label: 'Sync failed', tone: 'bad', symbol: '✕' },
  Error: { label: 'Sync error', tone: 'bad', symbol: '✕' },
  Succeeded: { label: 'Sync OK', tone: 'ok', symbol: '✓' },
}

const unknown: Badge = { label: 'Unknown', tone: 'muted', symbol: '?' }

export function syncBadge(status: string | null | undefined): Badge {
  return (status && Object.hasOwn(sync, status) ? sync[status] : undefined) ?? unknown
}

export function healthBadge(status: string | null | undefined): Badge {
  return (status && Object.hasOwn(health, status) ? health[status] : undefined) ?? unknown
}

/** operationBadge is null when no operation ran (nothing to show). */
export function operationBadge(phase: string | null | undefined): Badge | null {
  if (!phase) return null
  return (Object.hasOwn(operation, phase) ? operation[phase] : undefined) ?? { ...unknown, label: phase }
}
