// The network view: Ingresses with their hosts and the Services they route
// to, and each Service with the workloads and Pods it selects. The tree
// gives the Pods; the managed resources' live manifests give backends,
// selectors and labels, read again with each tree update.
import { useEffect, useMemo } from 'react'
import { useQuery } from 'urql'
import { ErrorLine, Loading } from '../ui/Alert'
import { Badge } from '../ui/Badge'
import { healthBadge } from '../ui/badges'
import { errorMessage } from '../ui/errors'
import { NetworkQuery } from './documents'
import { buildNetwork, type LiveObject } from './network'
import { nodeId, type TreeResource } from './tree'

function Name({ r, onSelect, selected }: { r: TreeResource; onSelect: (r: TreeResource) => void; selected: string | null }) {
  return (
    <>
      <span className="k">{r.kind}</span>
      <button type="button" className={`link${nodeId(r) === selected ? ' chosen' : ''}`} onClick={() => onSelect(r)}>
        {r.name}
      </button>
      {r.health ? <Badge badge={healthBadge(r.health.status)} title={r.health.message} /> : null}
    </>
  )
}

export function NetworkView({
  name,
  namespace,
  resources,
  version,
  selected,
  onSelect,
}: {
  name: string
  namespace: string | null
  resources: readonly TreeResource[]
  version: number
  selected: string | null
  onSelect: (r: TreeResource) => void
}) {
  const [res, refetch] = useQuery({ query: NetworkQuery, variables: { app: name, appNamespace: namespace }, requestPolicy: 'network-only' })
  useEffect(() => {
    if (version > 1) refetch({ requestPolicy: 'network-only' })
  }, [version, refetch])
  const a = res.data?.application
  const net = useMemo(() => {
    if (!a) return null
    const objects: LiveObject[] = [a.ingresses, a.services, a.deployments, a.statefulSets, a.daemonSets, a.replicaSets, a.jobs, a.cronJobs, a.pods].flat()
    return buildNetwork(resources, objects)
  }, [a, resources])
  if (res.error && !net) return <ErrorLine error={errorMessage(res.error)} />
  if (!net) return <Loading what="the network" />
  if (net.ingresses.length === 0 && net.services.length === 0) return <p className="empty">The application has no Ingresses or Services.</p>
  const services = net.services
  return (
    <div className="net-view">
      <div className="net-columns">
        {net.ingresses.length > 0 ? (
          <section aria-label="Ingresses" className="net-list-col">
            <h3 className="events-title">Ingresses</h3>
            {net.ingresses.map((i) => (
              <article key={nodeId(i.resource)} className="net-card" data-ingress={i.resource.name}>
                <h3>
                  <Name r={i.resource} onSelect={onSelect} selected={selected} />
                </h3>
                {i.hosts.length > 0 ? <span className="k">{i.hosts.join(', ')}</span> : null}
                <ul className="net-list" aria-label={`Backends of ${i.resource.name}`}>
                  {i.backends.map((b) => {
                    const s = services.find((x) => x.resource.name === b && x.resource.namespace === i.resource.namespace)
                    return (
                      <li key={b} data-backend={b}>
                        <span className="net-arrow">→</span> {s ? <Name r={s.resource} onSelect={onSelect} selected={selected} /> : <span>Service {b} (not in the application)</span>}
                      </li>
                    )
                  })}
                </ul>
              </article>
            ))}
          </section>
        ) : null}
        <section aria-label="Services" className="net-list-col">
          <h3 className="events-title">Services</h3>
          {services.length === 0 ? <p className="empty">None.</p> : null}
          {services.map((s) => (
            <article key={nodeId(s.resource)} className="net-card" data-service={s.resource.name}>
              <h3>
                <Name r={s.resource} onSelect={onSelect} selected={selected} />
                {s.exposed ? <span className="k">behind an Ingress</span> : null}
              </h3>
              {s.workloads.length > 0 ? (
                <span className="k">selects {s.workloads.map((w) => `${w.kind} ${w.name}`).join(', ')}</span>
              ) : (
                <span className="k">selects no workload of the application</span>
              )}
              <ul className="net-list" aria-label={`Pods of ${s.resource.name}`}>
                {s.pods.map((p) => (
                  <li key={nodeId(p)} data-pod={p.name}>
                    <span className="net-arrow">→</span> <Name r={p} onSelect={onSelect} selected={selected} />
                  </li>
                ))}
              </ul>
            </article>
          ))}
        </section>
      </div>
    </div>
  )
}
