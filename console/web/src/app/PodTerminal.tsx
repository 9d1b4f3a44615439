// A shell in one of a Pod's containers, in xterm.js, over graphcd's
// terminal websocket (see docs/terminal.md). The server decides: it needs
// exec.enabled and the exec permission, and closes the socket with a
// reason when it refuses or ends the session; the reason is shown here.
import { FitAddon } from '@xterm/addon-fit'
import { Terminal } from '@xterm/xterm'
import '@xterm/xterm/css/xterm.css'
import { useEffect, useRef, useState } from 'react'
import { useQuery } from 'urql'
import { parse } from 'yaml'
import type { AppRef } from '../router'
import { LiveResourceQuery } from './documents'
import { closedText, output, resize, stdin, terminalURL } from './terminal'

type State = { phase: 'idle' } | { phase: 'connecting' } | { phase: 'open' } | { phase: 'closed'; text: string }

/** containersOf lists the container names of a Pod's manifest. */
function containersOf(manifest: string | undefined): string[] {
  if (!manifest) return []
  try {
    const pod = parse(manifest) as { spec?: { containers?: { name?: unknown }[] } }
    return (pod.spec?.containers ?? []).map((c) => c.name).filter((n): n is string => typeof n === 'string')
  } catch {
    return []
  }
}

export function PodTerminal({ app, namespace, pod }: { app: AppRef; namespace: string; pod: string }) {
  const [live] = useQuery({
    query: LiveResourceQuery,
    variables: { app: app.name, appNamespace: app.namespace, group: '', kind: 'Pod', namespace, name: pod, events: 0 },
  })
  const containers = containersOf(live.data?.application?.liveResource?.manifest)
  const [container, setContainer] = useState('')
  const chosen = container || containers[0] || ''
  const [session, setSession] = useState(0)
  const [state, setState] = useState<State>({ phase: 'idle' })
  const box = useRef<HTMLDivElement>(null)

  useEffect(() => {
    if (session === 0 || !box.current || !chosen) return
    const term = new Terminal({ cursorBlink: true, fontSize: 13, convertEol: false, scrollback: 5000 })
    const fit = new FitAddon()
    term.loadAddon(fit)
    term.open(box.current)
    fit.fit()
    setState({ phase: 'connecting' })
    const ws = new WebSocket(terminalURL(window.location, { app, namespace, pod, container: chosen }))
    const send = (m: string) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(m)
    }
    ws.onopen = () => {
      setState({ phase: 'open' })
      send(resize(term.rows, term.cols))
      term.focus()
    }
    ws.onmessage = (ev) => {
      const text = output(ev.data)
      if (text !== null) term.write(text)
    }
    ws.onclose = (ev) => setState({ phase: 'closed', text: closedText(ev.code, ev.reason) })
    const typed = term.onData((d) => send(stdin(d)))
    const resized = term.onResize(({ rows, cols }) => send(resize(rows, cols)))
    const observer = new ResizeObserver(() => fit.fit())
    observer.observe(box.current)
    return () => {
      observer.disconnect()
      typed.dispose()
      resized.dispose()
      ws.onclose = null
      ws.close()
      term.dispose()
    }
    // app is a new object on every render; its fields are what matter.
  }, [session, app.name, app.namespace, namespace, pod, chosen])

  const status =
    state.phase === 'idle'
      ? 'Not connected.'
      : state.phase === 'connecting'
        ? 'Connecting…'
        : state.phase === 'open'
          ? `Connected to ${chosen}.`
          : state.text

  return (
    <div className="terminal">
      <div className="logs-bar">
        <label>
          Container
          {containers.length > 1 ? (
            <select value={chosen} onChange={(e) => setContainer(e.target.value)}>
              {containers.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          ) : (
            <input value={chosen} onChange={(e) => setContainer(e.target.value)} placeholder="container name" />
          )}
        </label>
        <button type="button" disabled={!chosen || state.phase === 'connecting' || state.phase === 'open'} onClick={() => setSession((n) => n + 1)}>
          {session === 0 ? 'Connect' : 'Reconnect'}
        </button>
        <span role="status" className="terminal-status" data-phase={state.phase}>
          {status}
        </span>
      </div>
      <div className="terminal-screen" ref={box} aria-label={`Terminal of ${pod}`} />
    </div>
  )
}
