// URLs that come from data (repository URLs, link annotations, the banner
// URL) may be anything a user wrote; only web links and same-site paths
// may become an href.

/**
 * safeHref returns url when it is an http(s) URL or a path on this site,
 * and undefined otherwise (javascript:, data:, vbscript:, protocol-relative
 * //host ...), so `<a href={safeHref(u)}>` renders no link for the rest.
 */
export function safeHref(url: string | null | undefined): string | undefined {
  if (!url) return undefined
  // Browsers drop leading/trailing spaces and ASCII controls and ignore tabs
  // and newlines inside a URL ("java\tscript:"), so judge what they would see.
  const seen = url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '')
  if (seen === '' || /[\u0000-\u001f\u007f]/.test(seen)) return undefined
  // Backslashes count as slashes in http(s) URLs: "/\host" is protocol-relative.
  if (/^[/\\]{2}/.test(seen)) return undefined
  if (seen.startsWith('/')) return seen
  let parsed: URL
  try {
    parsed = new URL(seen)
  } catch {
    return undefined // no scheme: a relative path like "docs/x" is not expected from data
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? seen : undefined
}

/**
 * externalHref is safeHref for URLs that must name another site (a
 * repository, an external URL): absolute http(s) only, never a path here.
 */
export function externalHref(url: string | null | undefined): string | undefined {
  const href = safeHref(url)
  return href && !href.startsWith('/') ? href : undefined
}
