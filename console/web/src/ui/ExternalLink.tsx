import { externalHref } from '../safeurl'

/** ExternalLink shows a URL from data, as a link only when it names another site over http(s). */
export function ExternalLink({ url }: { url: string }) {
  const href = externalHref(url)
  return href ? (
    <a href={href} target="_blank" rel="noreferrer noopener">
      {url}
    </a>
  ) : (
    <span>{url}</span>
  )
}
