// The deep links of one resource (graphcd-cm's resource.links), under its
// summary. They are built from the live object, so a resource the cluster
// lacks has none; a failed read shows nothing rather than an error beside
// the summary.
import { useEffect } from 'react'
import { useQuery } from 'urql'
import type { AppRef } from '../router'
import { DeepLinks } from '../ui/DeepLinks'
import { LiveResourceQuery } from './documents'
import type { ResourceId } from './resourceParam'

export function ResourceLinks({ app, id, version }: { app: AppRef; id: ResourceId; version: number }) {
  // The same variables as the Live tab's query, so the two share one answer.
  const [res, refetch] = useQuery({ query: LiveResourceQuery, variables: { app: app.name, appNamespace: app.namespace, ...id, events: 0 }, requestPolicy: 'cache-and-network' })
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' })
  }, [version, refetch])
  const links = res.data?.application?.liveResource.links ?? []
  if (links.length === 0) return null
  return (
    <section className="resource-links">
      <h3 className="events-title">Links</h3>
      <DeepLinks links={links} label={`Links of ${id.kind} ${id.name}`} />
    </section>
  )
}
