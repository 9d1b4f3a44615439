import { describe, expect, it } from 'vitest'
import { badgeBase, badgeSnippets, badgeURLs } from './badge'

describe('badge', () => {
  it('names the configured server, else the console’s origin', () => {
    expect(badgeBase('https://cd.example.com/', 'https://127.0.0.1:8080')).toBe('https://cd.example.com')
    expect(badgeBase('', 'https://127.0.0.1:8080')).toBe('https://127.0.0.1:8080')
    expect(badgeBase('javascript:alert(1)', 'https://h')).toBe('https://h')
  })
  it('builds the image and page URLs, with the namespace for an app outside the server’s', () => {
    expect(badgeURLs('https://h', 'guestbook', null)).toEqual({ image: 'https://h/api/badge?name=guestbook', page: 'https://h/applications/guestbook' })
    expect(badgeURLs('https://h', 'a b', 'team-a')).toEqual({ image: 'https://h/api/badge?name=a+b&appNamespace=team-a', page: 'https://h/applications/team-a/a%20b' })
  })
  it('escapes what would break the Markdown or the HTML', () => {
    const s = badgeSnippets('x]"<', { image: 'https://h/api/badge?name=x(1)', page: 'https://h/applications/x' })
    expect(s.markdown).toBe('[![x\\]"<](https://h/api/badge?name=x%281%29)](https://h/applications/x)')
    expect(s.html).toBe('<a href="https://h/applications/x"><img src="https://h/api/badge?name=x(1)" alt="x]&quot;&lt;"></a>')
  })
})
