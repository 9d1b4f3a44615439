import { describe, expect, it } from 'vitest'
import { externalHref, safeHref } from './safeurl'

describe('safeHref', () => {
  it('keeps http(s) URLs and site paths', () => {
    for (const u of ['https://git.example.com/apps.git', 'http://127.0.0.1:8080/x?y=1#z', 'HTTPS://EXAMPLE.COM', '/applications/web']) {
      expect(safeHref(u)).toBe(u)
    }
    expect(safeHref('  https://example.com/  ')).toBe('https://example.com/')
  })

  it('refuses script, data and other schemes, however written', () => {
    for (const u of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      '\u0001javascript:alert(1)',
      'java\tscript:alert(1)',
      'java\nscript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'DATA:text/html;base64,PHNjcmlwdD4=',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'ssh://git@example.com/repo.git',
      'git@example.com:org/repo.git',
      'https://exa\u0000mple.com',
    ]) {
      expect(safeHref(u), u).toBeUndefined()
    }
  })

  it('refuses protocol-relative URLs and empty input', () => {
    for (const u of ['//evil.example', '/\\evil.example', '\\\\evil.example', ' //evil.example', '', null, undefined, '   ']) {
      expect(safeHref(u), String(u)).toBeUndefined()
    }
  })
})

describe('externalHref', () => {
  it('keeps absolute http(s) URLs only', () => {
    expect(externalHref('https://git.example.com/a.git')).toBe('https://git.example.com/a.git')
    for (const u of ['/applications', 'javascript:alert(1)', '//evil.example', 'git@example.com:a.git']) expect(externalHref(u), u).toBeUndefined()
  })
})
