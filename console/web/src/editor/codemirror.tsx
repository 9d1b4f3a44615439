// The CodeMirror side of the editor components. Only index.tsx imports this
// module, lazily, so CodeMirror stays out of the main bundle.
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands'
import { yaml } from '@codemirror/lang-yaml'
import { HighlightStyle, bracketMatching, foldGutter, foldKeymap, indentOnInput, syntaxHighlighting } from '@codemirror/language'
import { MergeView, unifiedMergeView } from '@codemirror/merge'
import { EditorState, type Extension } from '@codemirror/state'
import { EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view'
import { tags } from '@lezer/highlight'
import { useEffect, useMemo, useRef, useState } from 'react'
import { changeSummary, defaultDiffMode, lineChanges, manifestText } from './diffText'
import type { DiffMode, DiffViewProps, YamlEditorProps, YamlViewProps } from './types'

// Colours come from the console's CSS variables, so light and dark follow the page.
const theme = EditorView.theme({
  '&': { backgroundColor: 'var(--panel)', color: 'var(--text)', fontSize: '0.85rem', height: '100%' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', overflow: 'auto' },
  '.cm-gutters': { backgroundColor: 'var(--bg)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'color-mix(in srgb, var(--accent) 8%, transparent)' },
  '&.cm-focused': { outline: '2px solid var(--focus)' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
})

// YAML's tokens in the console's own colours (CSS variables), so an open
// editor follows a theme switch without being rebuilt.
const highlight = HighlightStyle.define([
  { tag: tags.propertyName, color: 'var(--accent)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--ok)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--warn)' },
  { tag: [tags.comment, tags.lineComment], color: 'var(--muted)', fontStyle: 'italic' },
  { tag: [tags.meta, tags.keyword, tags.labelName], color: 'var(--bad)' },
])

function base(label: string): Extension[] {
  return [
    lineNumbers(),
    foldGutter(),
    highlightActiveLineGutter(),
    yaml(),
    syntaxHighlighting(highlight),
    keymap.of([...defaultKeymap, ...foldKeymap]),
    EditorView.contentAttributes.of({ 'aria-label': label }),
    theme,
  ]
}

// Read-only keeps the text focusable and selectable (keyboard users can
// move through it and copy), which editable:false would not.
function readOnly(label: string): Extension[] {
  return [...base(label), EditorState.readOnly.of(true), drawSelection()]
}

/** replaceDoc shows text in view unless it already does. */
function replaceDoc(view: EditorView | null, text: string): void {
  if (!view || view.state.doc.toString() === text) return
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } })
}

export function YamlView({ value, label, height }: YamlViewProps) {
  const parent = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  const first = useRef(value)
  first.current = value

  useEffect(() => {
    if (!parent.current) return
    const v = new EditorView({ parent: parent.current, state: EditorState.create({ doc: first.current, extensions: readOnly(label) }) })
    view.current = v
    return () => {
      v.destroy()
      view.current = null
    }
  }, [label])
  useEffect(() => replaceDoc(view.current, value), [value])

  return <div className="cm-host" ref={parent} style={{ height }} />
}

export function YamlEditor({ value, onChange, label, height = '20rem', onSave }: YamlEditorProps) {
  const parent = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  // The latest callbacks and value, read by the editor without recreating it.
  const latest = useRef({ value, onChange, onSave })
  latest.current = { value, onChange, onSave }

  useEffect(() => {
    if (!parent.current) return
    const save = { key: 'Mod-s', preventDefault: true, run: () => (latest.current.onSave?.(), true) }
    const v = new EditorView({
      parent: parent.current,
      state: EditorState.create({
        doc: latest.current.value,
        extensions: [
          ...base(label),
          history(),
          drawSelection(),
          highlightActiveLine(),
          indentOnInput(),
          bracketMatching(),
          // Tab indents; Escape then Tab leaves the editor (CodeMirror's rule), so keyboard users are not trapped.
          keymap.of([save, ...historyKeymap, indentWithTab]),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) latest.current.onChange(u.state.doc.toString())
          }),
        ],
      }),
    })
    view.current = v
    return () => {
      v.destroy()
      view.current = null
    }
  }, [label])
  useEffect(() => replaceDoc(view.current, value), [value])

  return <div className="cm-host" ref={parent} style={{ height }} />
}

const collapse = { margin: 3, minSize: 6 }

function SplitDiff({ live, desired }: { live: string; desired: string }) {
  const parent = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!parent.current) return
    const m = new MergeView({
      a: { doc: live, extensions: readOnly('Live manifest') },
      b: { doc: desired, extensions: readOnly('Desired manifest') },
      parent: parent.current,
      collapseUnchanged: collapse,
      gutter: true,
    })
    return () => m.destroy()
  }, [live, desired])
  return (
    <>
      <div className="diff-columns" aria-hidden="true">
        <span>Live</span>
        <span>Desired</span>
      </div>
      <div className="cm-host" ref={parent} />
    </>
  )
}

function InlineDiff({ live, desired }: { live: string; desired: string }) {
  const parent = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!parent.current) return
    const v = new EditorView({
      parent: parent.current,
      state: EditorState.create({
        doc: desired,
        extensions: [
          ...readOnly('Desired manifest, with the lines only live shown as deletions'),
          unifiedMergeView({ original: live, mergeControls: false, collapseUnchanged: collapse }),
        ],
      }),
    })
    return () => v.destroy()
  }, [live, desired])
  return <div className="cm-host" ref={parent} />
}

export function DiffView({ live, desired, initialMode, height }: DiffViewProps) {
  const [mode, setMode] = useState<DiffMode>(() => initialMode ?? defaultDiffMode(window.innerWidth))
  const a = manifestText(live)
  const b = manifestText(desired)
  const summary = useMemo(() => changeSummary(lineChanges(a, b)), [a, b])
  return (
    <div className="diff" style={{ height }}>
      <div className="diff-bar">
        <span role="group" aria-label="Diff layout" className="toggle">
          <button type="button" className="small" aria-pressed={mode === 'split'} onClick={() => setMode('split')}>
            Side by side
          </button>
          <button type="button" className="small" aria-pressed={mode === 'inline'} onClick={() => setMode('inline')}>
            Inline
          </button>
        </span>
        <span className="k" data-testid="diff-summary">{summary}</span>
      </div>
      {mode === 'split' ? <SplitDiff live={a} desired={b} /> : <InlineDiff live={a} desired={b} />}
    </div>
  )
}
