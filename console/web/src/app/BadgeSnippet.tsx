// The application's status badge and the Markdown and HTML that embed it,
// each with a copy button; offered only when graphcd-cm turns badges on
// (statusbadge.enabled), since the image needs no login.
import { useState } from 'react'
import { useQuery } from 'urql'
import { badgeBase, badgeSnippets, badgeURLs } from './badge'
import { BadgeSettingsQuery } from './documents'

function Snippet({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied('yes')
    } catch {
      setCopied('failed')
    }
  }
  return (
    <div className="snippet">
      <label className="field">
        {label}
        <input readOnly value={text} onFocus={(e) => e.target.select()} />
      </label>
      <button type="button" className="small" onClick={() => void copy()} aria-label={`Copy the ${label} snippet`}>
        Copy
      </button>
      <span className="k" role="status">
        {copied === 'yes' ? 'Copied.' : copied === 'failed' ? 'The browser refused: select the text and copy it.' : ''}
      </span>
    </div>
  )
}

export function BadgeSnippet({ name, namespace }: { name: string; namespace: string | null }) {
  const [res] = useQuery({ query: BadgeSettingsQuery })
  const settings = res.data?.settings
  if (!settings?.statusBadgeEnabled) return null
  const urls = badgeURLs(badgeBase(settings.url, window.location.origin), name, namespace)
  const snippets = badgeSnippets(name, urls)
  return (
    <details className="badge-snippet">
      <summary>Status badge</summary>
      <img src={urls.image} alt={`Status badge of ${name}`} />
      <Snippet label="Markdown" text={snippets.markdown} />
      <Snippet label="HTML" text={snippets.html} />
    </details>
  )
}
