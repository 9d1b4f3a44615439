// The sync dialog's choices and how they become a syncApplication input.
import type { SyncApplicationInput } from '../gql/graphql'

/** The sync options the dialog offers, with what each does. */
export const SYNC_OPTIONS = [
  { option: 'Validate=false', label: 'Skip schema validation' },
  { option: 'CreateNamespace=true', label: 'Create the namespace' },
  { option: 'PruneLast=true', label: 'Prune last' },
  { option: 'ApplyOutOfSyncOnly=true', label: 'Apply out-of-sync only' },
  { option: 'ServerSideApply=true', label: 'Server-side apply' },
  { option: 'Replace=true', label: 'Replace' },
  { option: 'RespectIgnoreDifferences=true', label: 'Respect ignored differences' },
  { option: 'PrunePropagationPolicy=foreground', label: 'Prune in the foreground' },
] as const

export type SyncOption = (typeof SYNC_OPTIONS)[number]['option']

/** ResourceKey names one resource of the application. */
export interface ResourceKey {
  group: string
  kind: string
  namespace: string
  name: string
}

export function resourceId(r: ResourceKey): string {
  return `${r.group}/${r.kind}/${r.namespace}/${r.name}`
}

export interface RetryForm {
  enabled: boolean
  limit: string
  duration: string
  factor: string
  maxDuration: string
}

export interface SyncForm {
  revision: string
  prune: boolean
  dryRun: boolean
  force: boolean
  /** apply only, skipping hooks */
  applyOnly: boolean
  /** ids (resourceId) of the resources to sync; every resource when all is true */
  all: boolean
  selected: Set<string>
  options: Set<SyncOption>
  retry: RetryForm
}

/** The application's settings a sync starts from. */
export interface SyncDefaults {
  syncOptions: readonly string[]
  retry?: { limit: number; backoff?: { duration: string; factor?: number | null; maxDuration: string } | null } | null
}

/** initialSyncForm starts from the application's own sync options and retry policy. */
export function initialSyncForm(app: SyncDefaults): SyncForm {
  const known = new Set<string>(SYNC_OPTIONS.map((o) => o.option))
  const b = app.retry?.backoff
  return {
    revision: '',
    prune: false,
    dryRun: false,
    force: false,
    applyOnly: false,
    all: true,
    selected: new Set(),
    options: new Set(app.syncOptions.filter((o): o is SyncOption => known.has(o))),
    retry: {
      enabled: app.retry != null,
      limit: String(app.retry?.limit ?? 2),
      duration: b?.duration || '5s',
      factor: String(b?.factor ?? 2),
      maxDuration: b?.maxDuration || '3m',
    },
  }
}

// A Go duration as the server parses it (time.ParseDuration), e.g. 1m30s.
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/

/**
 * buildSyncInput turns the form into the mutation's input, or into the
 * problems the user must fix first (one message per field).
 */
export function buildSyncInput(
  app: { name: string; namespace: string },
  form: SyncForm,
  resources: readonly ResourceKey[],
): { input: SyncApplicationInput } | { errors: string[] } {
  const errors: string[] = []
  const input: SyncApplicationInput = {
    application: { name: app.name, namespace: app.namespace },
    prune: form.prune,
    dryRun: form.dryRun,
    force: form.force,
  }
  const revision = form.revision.trim()
  if (revision) input.revision = revision
  if (form.applyOnly) input.strategy = 'APPLY'
  if (form.options.size > 0) input.syncOptions = SYNC_OPTIONS.map((o) => o.option).filter((o) => form.options.has(o))
  if (!form.all) {
    const chosen = resources.filter((r) => form.selected.has(resourceId(r)))
    if (chosen.length === 0) errors.push('Choose at least one resource, or sync all of them.')
    input.resources = chosen.map((r) => ({ group: r.group, kind: r.kind, namespace: r.namespace, name: r.name }))
  }
  if (form.retry.enabled) {
    const r = form.retry
    const limit = Number(r.limit.trim())
    if (!/^-?\d+$/.test(r.limit.trim()) || !Number.isSafeInteger(limit)) errors.push('Retry limit must be a whole number (negative retries forever).')
    const factor = Number(r.factor.trim())
    if (!/^\d+$/.test(r.factor.trim()) || factor < 1) errors.push('Backoff factor must be a whole number of at least 1.')
    for (const [label, v] of [
      ['Backoff duration', r.duration],
      ['Maximum backoff', r.maxDuration],
    ] as const) {
      if (!DURATION.test(v.trim())) errors.push(`${label} must be a duration such as 5s, 2m or 1h30m.`)
    }
    input.retry = { limit, backoffDuration: r.duration.trim(), backoffFactor: factor, backoffMaxDuration: r.maxDuration.trim() }
  }
  return errors.length > 0 ? { errors } : { input }
}
