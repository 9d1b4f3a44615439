// The status badge of an application (/api/badge, see docs/badges.md) and
// the snippets that embed it in a README: pure functions.
import { appPath } from '../router'
import { externalHref } from '../safeurl'

/**
 * badgeBase is the server address the snippets name: graphcd-cm's url when
 * it is an http(s) URL, else the address the console was loaded from.
 */
export function badgeBase(settingsURL: string | null | undefined, origin: string): string {
  const u = externalHref(settingsURL?.trim())
  return (u ?? origin).replace(/\/+$/, '')
}

/** badgeURLs are the badge image's URL and the application page's, both absolute. */
export function badgeURLs(base: string, name: string, namespace: string | null): { image: string; page: string } {
  const q = new URLSearchParams({ name })
  if (namespace) q.set('appNamespace', namespace)
  return { image: `${base}/api/badge?${q.toString()}`, page: base + appPath(name, namespace) }
}

function escapeHTML(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

// Markdown link text and URLs: brackets and parentheses would end them early.
function escapeMarkdownText(s: string): string {
  return s.replace(/[\\[\]]/g, (c) => `\\${c}`)
}
function escapeMarkdownURL(s: string): string {
  return s.replace(/[()\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
}

/** badgeSnippets are the Markdown and HTML that show the badge, linking to the application's page. */
export function badgeSnippets(name: string, urls: { image: string; page: string }): { markdown: string; html: string } {
  const alt = escapeMarkdownText(name)
  return {
    markdown: `[![${alt}](${escapeMarkdownURL(urls.image)})](${escapeMarkdownURL(urls.page)})`,
    html: `<a href="${escapeHTML(urls.page)}"><img src="${escapeHTML(urls.image)}" alt="${escapeHTML(name)}"></a>`,
  }
}
