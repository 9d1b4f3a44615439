// Follows a Pod's log through the podLogs subscription: follow (keep the
// newest line in view), pause (hold new lines back), search (highlight
// matches) and a container picker for Pods with several containers.
import { useEffect, useRef, useState } from 'react'
import { useClient } from 'urql'
import type { AppRef } from '../router'
import { ErrorLine } from '../ui/Alert'
import { errorMessage } from '../ui/errors'
import { PodLogsSubscription } from './documents'
import { appendLines, containersFromError, countMatches, splitMatches } from './logText'

const TAIL = 500

export function PodLogs({ app, namespace, pod, images }: { app: AppRef; namespace: string; pod: string; images: readonly string[] }) {
  const client = useClient()
  const [container, setContainer] = useState('')
  // What is typed in the picker; the stream restarts only once it is chosen.
  const [draft, setDraft] = useState('')
  const [lines, setLines] = useState<string[]>([])
  const [held, setHeld] = useState<string[]>([])
  const [paused, setPaused] = useState(false)
  const [follow, setFollow] = useState(true)
  const [query, setQuery] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [offered, setOffered] = useState<string[]>([])
  const pausedRef = useRef(paused)
  pausedRef.current = paused
  const box = useRef<HTMLDivElement>(null)

  useEffect(() => {
    setLines([])
    setHeld([])
    setError(null)
    // Lines arrive one message each; they are added once per frame.
    let pending: string[] = []
    let frame = 0
    const flush = () => {
      frame = 0
      const add = pending
      pending = []
      if (pausedRef.current) setHeld((h) => appendLines(h, add))
      else setLines((l) => appendLines(l, add))
    }
    const sub = client
      .subscription(PodLogsSubscription, { app: app.name, appNamespace: app.namespace, namespace, pod, container: container || null, tailLines: TAIL })
      .subscribe((res) => {
        if (res.error) {
          const msg = errorMessage(res.error)
          setError(msg)
          const names = containersFromError(msg)
          if (names.length) setOffered(names)
          return
        }
        if (res.data?.podLogs === undefined) return
        pending.push(res.data.podLogs)
        if (!frame) frame = requestAnimationFrame(flush)
      })
    return () => {
      cancelAnimationFrame(frame)
      sub.unsubscribe()
    }
  }, [client, app.name, app.namespace, namespace, pod, container])

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight
  }, [lines, follow])

  const resume = () => {
    setLines((l) => appendLines(l, held))
    setHeld([])
    setPaused(false)
  }
  // Image names hint at container names until the server lists them.
  const hints = offered.length ? offered : [...new Set(images.map((i) => i.split('/').pop()?.split(/[:@]/)[0] ?? ''))].filter(Boolean)
  const matches = countMatches(lines, query)

  return (
    <div className="logs">
      <div className="logs-bar">
        <label>
          Container
          <input
            list="log-containers"
            value={draft}
            placeholder="the only one"
            onChange={(e) => {
              const v = e.target.value
              setDraft(v)
              // Picking a suggestion chooses it at once; typed names on Enter or blur.
              if (hints.includes(v.trim())) setContainer(v.trim())
            }}
            onBlur={() => setContainer(draft.trim())}
            onKeyDown={(e) => {
              if (e.key === 'Enter') setContainer(draft.trim())
            }}
          />
          <datalist id="log-containers">
            {hints.map((h) => (
              <option key={h} value={h} />
            ))}
          </datalist>
        </label>
        <label>
          Search
          <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Highlight text" />
        </label>
        {query ? (
          <span className="k" aria-live="polite">
            {matches} matching {matches === 1 ? 'line' : 'lines'}
          </span>
        ) : null}
        <button type="button" className="small" aria-pressed={follow} onClick={() => setFollow((f) => !f)}>
          Follow
        </button>
        {paused ? (
          <button type="button" className="small" onClick={resume}>
            Resume{held.length ? ` (${held.length} new)` : ''}
          </button>
        ) : (
          <button type="button" className="small" onClick={() => setPaused(true)}>
            Pause
          </button>
        )}
      </div>
      <ErrorLine error={error && `The log cannot be followed: ${error}${offered.length ? ' Pick a container above.' : ''}`} />
      <div className="log-lines" ref={box} tabIndex={0} role="log" aria-label={`Log of ${pod}`} onScroll={(e) => {
        // Scrolling up stops following; back at the bottom it resumes.
        const el = e.currentTarget
        const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight < 8
        if (atEnd !== follow) setFollow(atEnd)
      }}>
        {lines.length === 0 && !error ? <p className="empty">Waiting for log lines…</p> : null}
        {lines.map((l, i) => (
          <div key={i} className="log-line">
            {splitMatches(l, query).map((p, j) => (p.match ? <mark key={j}>{p.text}</mark> : <span key={j}>{p.text}</span>))}
          </div>
        ))}
      </div>
    </div>
  )
}
