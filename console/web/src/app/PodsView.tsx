// The Pods view: the application's Pods as cards grouped by node or by
// the workload that made them, each with its health, status and
// readiness; a click opens the Pod's panel (manifest, events, log).
import { useState } from 'react'
import { Badge } from '../ui/Badge'
import { healthBadge } from '../ui/badges'
import { Toggle } from '../ui/Toggle'
import { groupPods, infoValue, type PodGrouping } from './pods'
import { nodeId, type TreeResource } from './tree'

const groupings = [
  ['parent', 'By owner'],
  ['node', 'By node'],
] as const

export function PodsView({
  resources,
  changed,
  selected,
  onSelect,
}: {
  resources: readonly TreeResource[]
  changed: ReadonlySet<string>
  selected: string | null
  onSelect: (r: TreeResource) => void
}) {
  const [by, setBy] = useState<PodGrouping>('parent')
  const groups = groupPods(resources, by)
  return (
    <div className="pods-view">
      <div className="pods-bar">
        <Toggle label="Group Pods" options={groupings} value={by} onChange={setBy} />
      </div>
      {groups.length === 0 ? (
        <p className="empty">The application has no Pods{resources.length > 0 ? ' that the filters show' : ''}.</p>
      ) : (
        <div className="pod-groups">
          {groups.map((g) => (
            <section key={g.key} className="pod-group" aria-label={g.label} data-group={g.key}>
              <h3>
                {g.label}
                {g.health ? <Badge badge={healthBadge(g.health)} /> : null}
                <span className="k">
                  {g.pods.length} {g.pods.length === 1 ? 'Pod' : 'Pods'}
                </span>
              </h3>
              <ul className="pod-list">
                {g.pods.map((p) => {
                  const id = nodeId(p)
                  const status = infoValue(p, 'Status Reason')
                  const containers = infoValue(p, 'Containers')
                  const restarts = infoValue(p, 'Restart Count')
                  return (
                    <li key={id} className={`${changed.has(id) ? 'flash' : ''}${id === selected ? ' chosen' : ''}`} data-pod={p.name}>
                      {p.health ? <Badge badge={healthBadge(p.health.status)} title={p.health.message} /> : null}
                      <button type="button" className="link" onClick={() => onSelect(p)} title={`Pod ${p.namespace}/${p.name}`}>
                        {p.name}
                      </button>
                      <span className="k">
                        {[status, containers && `${containers} ready`, restarts && restarts !== '0' && `${restarts} restarts`, by === 'parent' && infoValue(p, 'Node')].filter(Boolean).join(' · ')}
                      </span>
                    </li>
                  )
                })}
              </ul>
            </section>
          ))}
        </div>
      )}
    </div>
  )
}
