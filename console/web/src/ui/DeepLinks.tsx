// Deep links (graphcd-cm's application.links, project.links,
// resource.links): each a link to another tool, shown only when its URL is
// http(s); anything else (the server already drops such links) shows as
// text, never as an href.
import type { LinkFragment } from '../gql/graphql'
import { externalHref } from '../safeurl'

export function DeepLinks({ links, label }: { links: readonly LinkFragment[] | null | undefined; label: string }) {
  const list = (links ?? []).filter((l) => l && l.title)
  if (list.length === 0) return null
  return (
    <ul className="deep-links" aria-label={label}>
      {list.map((l, i) => {
        const href = externalHref(l.url)
        const title = l.description ? `${l.description} (${l.url})` : l.url
        return (
          <li key={i} data-icon={l.iconClass || undefined}>
            {href ? (
              <a href={href} target="_blank" rel="noreferrer noopener" title={title}>
                {l.title}
              </a>
            ) : (
              <span title={title}>{l.title}</span>
            )}
            {l.description ? <span className="k"> {l.description}</span> : null}
          </li>
        )
      })}
    </ul>
  )
}
