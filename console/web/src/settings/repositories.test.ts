import { describe, expect, it } from 'vitest'
import { repoKey, repositoryInput } from './Repositories'
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
})
