// The editor components, lazily loaded: CodeMirror is a separate chunk that
// is fetched the first time a page shows YAML, so the list page never pays
// for it. Until it arrives the text shows as plain preformatted text.
import { Suspense, lazy } from 'react'
import { Loading } from '../ui/Alert'
import type { DiffViewProps, YamlEditorProps, YamlViewProps } from './types'
import './editor.css'

export type { DiffMode, DiffViewProps, YamlEditorProps, YamlViewProps } from './types'

const load = () => import('./codemirror')
const LazyYamlView = lazy(() => load().then((m) => ({ default: m.YamlView })))
const LazyYamlEditor = lazy(() => load().then((m) => ({ default: m.YamlEditor })))
const LazyDiffView = lazy(() => load().then((m) => ({ default: m.DiffView })))

function Plain({ text, label, height }: { text: string; label: string; height?: string }) {
  return (
    <pre className="yaml-plain" aria-label={label} style={{ height }}>
      {text}
    </pre>
  )
}

/** YamlView shows YAML read-only with line numbers and folding. */
export function YamlView(props: YamlViewProps) {
  return (
    <Suspense fallback={<Plain text={props.value} label={props.label} height={props.height} />}>
      <LazyYamlView {...props} />
    </Suspense>
  )
}

/** YamlEditor edits YAML; onChange gets the whole text after each change. */
export function YamlEditor(props: YamlEditorProps) {
  return (
    <Suspense fallback={<Plain text={props.value} label={props.label} height={props.height ?? '20rem'} />}>
      <LazyYamlEditor {...props} />
    </Suspense>
  )
}

/** DiffView compares live with desired YAML, side by side or inline. */
export function DiffView(props: DiffViewProps) {
  return (
    <Suspense fallback={<Loading what="the diff" />}>
      <LazyDiffView {...props} />
    </Suspense>
  )
}
