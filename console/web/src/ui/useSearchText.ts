import { useEffect, useRef, useState } from 'react'

/** How long typing pauses before a search applies. */
const PAUSE_MS = 250

/**
 * useSearchText is the text of a search field whose applied value is
 * current: what is typed reaches apply (trimmed) after a pause, and a new
 * current (a link, Back) replaces the text. Renders for other reasons
 * (live events) do not restart the pause, and apply is called as it is then.
 */
export function useSearchText(current: string, apply: (text: string) => void): [string, (text: string) => void] {
  const [text, setText] = useState(current)
  const latest = useRef(apply)
  latest.current = apply
  useEffect(() => {
    if (text.trim() === current) return
    const t = setTimeout(() => latest.current(text.trim()), PAUSE_MS)
    return () => clearTimeout(t)
  }, [text, current])
  useEffect(() => setText(current), [current])
  return [text, setText]
}
