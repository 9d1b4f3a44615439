import { describe, expect, it } from 'vitest'
import { buildSyncInput, initialSyncForm, resourceId, type SyncForm } from './syncform'

const app = { name: 'web', namespace: 'graphcd' }
const cm = { group: '', kind: 'ConfigMap', namespace: 'web', name: 'settings' }
const deploy = { group: 'apps', kind: 'Deployment', namespace: 'web', name: 'web' }

function form(change: Partial<SyncForm> = {}): SyncForm {
  return { ...initialSyncForm({ syncOptions: [] }), ...change }
}

describe('initialSyncForm', () => {
  it('starts from the app sync options it knows and its retry policy', () => {
    const f = initialSyncForm({
      syncOptions: ['CreateNamespace=true', 'FailOnSharedResource=true'],
      retry: { limit: 5, backoff: { duration: '10s', factor: 3, maxDuration: '5m' } },
    })
    expect([...f.options]).toEqual(['CreateNamespace=true'])
    expect(f.retry).toEqual({ enabled: true, limit: '5', duration: '10s', factor: '3', maxDuration: '5m' })
    expect(initialSyncForm({ syncOptions: [] }).retry.enabled).toBe(false)
  })
})

describe('buildSyncInput', () => {
  it('sends only what was chosen for a plain sync', () => {
    expect(buildSyncInput(app, form(), [cm])).toEqual({
      input: { application: app, prune: false, dryRun: false, force: false },
    })
  })

  it('carries revision, prune, dry run, apply strategy and options in a stable order', () => {
    const got = buildSyncInput(
      app,
      form({ revision: ' v2 ', prune: true, dryRun: true, applyOnly: true, options: new Set(['Replace=true', 'Validate=false']) }),
      [],
    )
    expect(got).toEqual({
      input: {
        application: app,
        revision: 'v2',
        prune: true,
        dryRun: true,
        force: false,
        strategy: 'APPLY',
        syncOptions: ['Validate=false', 'Replace=true'],
      },
    })
  })

  it('limits a selective sync to the checked resources', () => {
    const got = buildSyncInput(app, form({ all: false, selected: new Set([resourceId(deploy)]) }), [cm, deploy])
    expect(got).toMatchObject({ input: { resources: [{ group: 'apps', kind: 'Deployment', namespace: 'web', name: 'web' }] } })
    expect(buildSyncInput(app, form({ all: false }), [cm])).toEqual({ errors: ['Choose at least one resource, or sync all of them.'] })
  })

  it('builds the retry policy and says what is wrong with it', () => {
    const retry = { enabled: true, limit: '-1', duration: '5s', factor: '2', maxDuration: '1h30m' }
    expect(buildSyncInput(app, form({ retry }), [])).toMatchObject({
      input: { retry: { limit: -1, backoffDuration: '5s', backoffFactor: 2, backoffMaxDuration: '1h30m' } },
    })
    const bad = buildSyncInput(app, form({ retry: { enabled: true, limit: 'x', duration: '5', factor: '0', maxDuration: '3 m' } }), [])
    expect(bad).toEqual({
      errors: [
        'Retry limit must be a whole number (negative retries forever).',
        'Backoff factor must be a whole number of at least 1.',
        'Backoff duration must be a duration such as 5s, 2m or 1h30m.',
        'Maximum backoff must be a duration such as 5s, 2m or 1h30m.',
      ],
    })
    expect(buildSyncInput(app, form({ retry: { ...retry, enabled: false, limit: 'x' } }), [])).not.toHaveProperty('errors')
  })
})
