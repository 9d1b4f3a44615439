import { describe, expect, it } from 'vitest'
import { connectionStatuses, createObjects, repoKey, repoObject, repositoryInput } from './Repositories'
import { mergeWrites, noWrites, withRemoved, withSaved } from './writes'

const repo = (url: string, template = false) => ({ url, name: '', type: 'git', project: '', hasCredentials: false, template })

describe('repositories', () => {
  it('shows what the page saved or removed before the server lists it', () => {
    const listed = [repo('https://b.example/r.git'), repo('https://c.example/r.git'), repo('https://c.example/', true)]
    let w = withSaved(noWrites<ReturnType<typeof repo>>(), repo('https://c.example/r.git'), repoKey)
    w = withRemoved(w, repoKey(repo('https://c.example/r.git')), repoKey)
    w = withSaved(w, { ...repo('https://a.example/r.git'), hasCredentials: true }, repoKey)
    expect(w.saved).toHaveLength(1)
    const got = mergeWrites(listed, w, repoKey)
    expect(got.map((r) => `${r.url}${r.template ? ' (template)' : ''}`)).toEqual(['https://a.example/r.git', 'https://b.example/r.git', 'https://c.example/ (template)'])
  })

  it("tells a project's own declaration from a global one of the same URL", () => {
    const global = repo('https://c.example/r.git')
    const scoped = { ...global, project: 'shop' }
    expect(repoKey(scoped)).not.toEqual(repoKey(global))
    expect(repoObject(global)).toEqual('https://c.example/r.git')
    expect(repoObject(scoped)).toEqual('shop/https://c.example/r.git')
  })

  it('sends credentials as typed, leaves empty fields out, and never tests templates', () => {
    const form = {
      url: ' https://git.example/r.git ',
      type: 'git',
      name: '',
      project: 'shop',
      username: 'bot',
      password: ' secret ',
      sshPrivateKey: '',
      tlsClientCertData: '',
      tlsClientCertKey: '',
      insecure: false,
      enableOCI: false,
      skipTest: false,
    }
    expect(repositoryInput(form, false, true)).toEqual({
      url: 'https://git.example/r.git',
      type: 'git',
      name: undefined,
      project: 'shop',
      username: 'bot',
      password: ' secret ',
      sshPrivateKey: undefined,
      tlsClientCertData: undefined,
      tlsClientCertKey: undefined,
      insecure: false,
      enableOCI: false,
      template: false,
      upsert: true,
      skipTest: false,
    })
    expect(repositoryInput(form, true, false).skipTest).toBe(true)
  })

  it("keys a connection test by its declaration: a project's and the global one of a URL apart", () => {
    const url = 'https://c.example/r.git'
    const at = '2026-12-04T10:00:00Z'
    const global = { ...repo(url), connectionState: { status: 'SUCCESSFUL', message: '', attemptedAt: at } }
    const scoped = { ...repo(url), project: 'shop', connectionState: { status: 'FAILED', message: 'authentication required', attemptedAt: at } }
    const untested = { ...repo('https://d.example/r.git'), project: 'shop', connectionState: null }
    for (const nodes of [
      [global, scoped, untested],
      [scoped, global, untested],
    ]) {
      const got = connectionStatuses(nodes)
      expect(Object.keys(got).sort()).toEqual([repoKey(global), repoKey(scoped)].sort())
      expect(got[repoKey(global)]?.ok).toBe(true)
      expect(got[repoKey(scoped)]?.ok).toBe(false)
      expect(got[repoKey(scoped)]?.text).toContain('authentication required')
      expect(got[url]).toBeUndefined()
    }
  })

  it('asks about every object a rule may allow creating a repository on', () => {
    const rule = (resource: string, action: string, object: string, effect = 'allow') => ({ resource, action, object, effect })
    expect(createObjects([])).toEqual(['*'])
    expect(
      createObjects([
        rule('repositories', 'create', 'team/*'),
        rule('repositories', 'get', 'other/*'),
        rule('repositories', 'create', 'denied/*', 'deny'),
        rule('clusters', 'create', 'clusters/*'),
        rule('*', '*', 'admin/*'),
        rule('repo*', 'cr*', 'glob/*'),
        rule('repositories', 'create', 'team/*'),
      ]),
    ).toEqual(['*', 'team/*', 'admin/*', 'glob/*'])
  })
})
