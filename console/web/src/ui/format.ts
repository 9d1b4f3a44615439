// How values from the API read: times in the browser's locale and zone,
// destinations as people name them.
import type { DestinationFragment, SourceFragment } from '../gql/graphql'

/** dateTime is a moment as date and time. */
export function dateTime(t: string): string {
  return new Date(t).toLocaleString()
}

/** clockTime is a moment (now when left out) as the time of day. */
export function clockTime(t?: string): string {
  return (t === undefined ? new Date() : new Date(t)).toLocaleTimeString()
}

/** destinationText names a destination by its cluster's name (else its server URL) and its namespace. */
export function destinationText(d: DestinationFragment): string {
  return `${d.name || d.server}${d.namespace ? ` / ${d.namespace}` : ''}`
}

/**
 * sourceText names where an application's manifests come from: its source's
 * repository with the chart or path and revision, or its sources' repositories.
 */
export function sourceText(spec: { source?: Pick<SourceFragment, 'repoURL' | 'chart' | 'path' | 'targetRevision'> | null; sources: { repoURL: string }[] }): string {
  const s = spec.source
  if (!s) return spec.sources.map((x) => x.repoURL).join(', ')
  return `${s.repoURL}${s.chart ? ` (${s.chart})` : s.path ? ` / ${s.path}` : ''}${s.targetRevision ? ` @ ${s.targetRevision}` : ''}`
}
