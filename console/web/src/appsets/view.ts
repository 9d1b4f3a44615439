// How an ApplicationSet reads in the console: its generators in a few
// words, its state from its conditions, its RollingSync by step, and the
// manifest a new set starts from.
import type { Badge } from '../ui/badges'

/**
 * generatorsSummary names a set's generators from their JSON (the API's
 * spec.generators), e.g. "list (2 elements), matrix (git directories,
 * clusters)"; JSON that is not a list of generators reads as it is.
 */
export function generatorsSummary(json: string): string {
  let gens: unknown
  try {
    gens = JSON.parse(json)
  } catch {
    return json
  }
  if (!Array.isArray(gens)) return json
  return gens.length === 0 ? 'none' : gens.map(generatorText).join(', ')
}

function generatorText(g: unknown): string {
  if (g === null || typeof g !== 'object') return '?'
  // A generator is one key naming its kind, beside an optional selector.
  const [kind, body] = Object.entries(g).find(([k]) => k !== 'selector') ?? ['?', null]
  const b: Record<string, unknown> = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {}
  switch (kind) {
    case 'list': {
      if (!Array.isArray(b.elements)) return 'list'
      const n = b.elements.length
      return `list (${n} ${n === 1 ? 'element' : 'elements'})`
    }
    case 'git':
      return Array.isArray(b.files) ? 'git files' : 'git directories'
    case 'matrix':
    case 'merge':
      return `${kind} (${Array.isArray(b.generators) ? b.generators.map(generatorText).join(', ') : ''})`
    default:
      return kind
  }
}

type Condition = { type: string; status: string; message: string }

/**
 * setState is a set's state in one badge, from its conditions: an error
 * first, then a rollout under way, then up to date; a set the controller
 * has not looked at yet is Pending. The message says why.
 */
export function setState(conditions: readonly Condition[]): { badge: Badge; message: string } {
  const holds = (type: string) => conditions.find((c) => c.type === type && c.status === 'True')
  const error = holds('ErrorOccurred')
  if (error) return { badge: { label: 'Error', tone: 'bad', symbol: '✕' }, message: error.message }
  const rolling = holds('RolloutProgressing')
  if (rolling) return { badge: { label: 'Progressing', tone: 'busy', symbol: '◌' }, message: rolling.message }
  const upToDate = holds('ResourcesUpToDate')
  if (upToDate) return { badge: { label: 'Up to date', tone: 'ok', symbol: '✓' }, message: upToDate.message }
  if (conditions.length === 0) return { badge: { label: 'Pending', tone: 'muted', symbol: '…' }, message: 'The controller has not generated this set yet.' }
  return { badge: { label: 'Unknown', tone: 'muted', symbol: '?' }, message: conditions.map((c) => c.message).filter(Boolean).join(' ') }
}

const actions: Record<string, Badge> = {
  Created: { label: 'Created', tone: 'ok', symbol: '+' },
  Updated: { label: 'Updated', tone: 'ok', symbol: '✓' },
  Unchanged: { label: 'Unchanged', tone: 'muted', symbol: '=' },
  Skipped: { label: 'Skipped', tone: 'warn', symbol: '⏸' },
  Failed: { label: 'Failed', tone: 'bad', symbol: '✕' },
  Deleted: { label: 'Deleted', tone: 'muted', symbol: '−' },
  Kept: { label: 'Kept', tone: 'muted', symbol: '⏸' },
}

/** actionBadge is what the controller did with one element of a generation. */
export function actionBadge(action: string): Badge {
  return actions[action] ?? { label: action, tone: 'muted', symbol: '?' }
}

const progress: Record<string, Badge> = {
  Waiting: { label: 'Waiting', tone: 'muted', symbol: '…' },
  Pending: { label: 'Pending', tone: 'warn', symbol: '⏸' },
  Progressing: { label: 'Progressing', tone: 'busy', symbol: '◌' },
  Healthy: { label: 'Healthy', tone: 'ok', symbol: '♥' },
}

/** rolloutBadge is an Application's progress through a RollingSync. */
export function rolloutBadge(status: string): Badge {
  return progress[status] ?? { label: status || 'Unknown', tone: 'muted', symbol: '?' }
}

type Progress = { application: string; status: string; step: string }

/** A RollingSync step with the Applications it holds, in the order the controller wrote them. */
export interface RolloutStep<P extends Progress> {
  /** the step's number as the controller writes it ("1", "2" ...); '' for Applications no step selects */
  step: string
  apps: P[]
}

/** rolloutSteps groups a RollingSync's progress by step, the steps in order and those no step selects last. */
export function rolloutSteps<P extends Progress>(list: readonly P[]): RolloutStep<P>[] {
  const byStep = new Map<string, P[]>()
  for (const p of list) byStep.set(p.step, [...(byStep.get(p.step) ?? []), p])
  const rank = (s: string) => (/^\d+$/.test(s) ? Number(s) : Number.MAX_SAFE_INTEGER)
  return [...byStep.entries()].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)).map(([step, apps]) => ({ step, apps }))
}

/**
 * previewName names an element of a dry run: its Application, or, when it
 * failed before one was rendered, its generator and parameters.
 */
export function previewName(e: { generator: number; params: string; application?: { name: string } | null }): string {
  return e.application?.name || `generator ${e.generator}: ${e.params}`
}

/** newSetManifest is where a new ApplicationSet starts: a list generator filling in one template. */
export function newSetManifest(): string {
  return `apiVersion: graphcd.io/v1alpha1
kind: ApplicationSet
metadata:
  name: ''
spec:
  generators:
    - list:
        elements:
          - env: dev
          - env: prod
  template:
    metadata:
      name: 'guestbook-{{env}}'
    spec:
      project: default
      source:
        repoURL: ''
        path: 'envs/{{env}}'
        targetRevision: HEAD
      destination:
        server: https://kubernetes.default.svc
        namespace: 'guestbook-{{env}}'
`
}
