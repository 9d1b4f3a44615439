import { useQuery } from 'urql'
import { ErrorLine } from '../ui/Alert'
import { errorText } from '../ui/errors'
import { clockTime } from '../ui/format'
import { ComponentStatusQuery } from './documents'

type Probe = { name: string; reachable: boolean; message: string }

function ProbeRow({ label, probe, extra }: { label: string; probe: Probe | null | undefined; extra?: string }) {
  if (!probe) return null
  return (
    <li className="card-row" data-component={label}>
      <div className="card-main">
        <strong>{label}</strong>
        <span className="k ellipsis">
          {probe.name}
          {extra ? ` · ${extra}` : ''}
        </span>
      </div>
      <span className={probe.reachable ? 'conn ok' : 'conn bad'} data-connection={probe.reachable ? 'ok' : 'failed'}>
        {probe.reachable ? 'Reachable' : `Unreachable: ${probe.message}`}
      </span>
    </li>
  )
}

type Memory = { limitBytes: number; liveHeapBytes: number; pressure: boolean; pressureSince?: string | null; waits: number }

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024)

/** MemoryLine says a replica's heap against its memory limit, and whether it is under pressure. */
function MemoryLine({ memory }: { memory: Memory }) {
  if (memory.limitBytes <= 0) return <span className="k ellipsis">no memory limit</span>
  return (
    <span className="k ellipsis" data-memory={memory.pressure ? 'pressure' : 'ok'}>
      heap {mib(memory.liveHeapBytes)} of {mib(memory.limitBytes)} MiB
      {memory.pressure ? ` · under memory pressure since ${clockTime(memory.pressureSince ?? undefined)}` : ''}
      {memory.waits > 0 ? ` · ${memory.waits} waited for memory` : ''}
    </span>
  )
}

/** ComponentStatus shows graphcd's replicas and the parts the API reaches; for admins. */
export function ComponentStatus() {
  const [res] = useQuery({ query: ComponentStatusQuery })
  const cs = res.data?.componentStatus
  const redis = cs?.redis
  return (
    <section aria-labelledby="components-title">
      <h2 id="components-title">Components</h2>
      <ErrorLine error={res.error ? errorText('Loading the components failed', res.error) : null} />
      {cs ? (
        <ul className="cards" aria-label="Components">
          {cs.apiReplicas.map((r) => (
            <li key={`api/${r.id}`} className="card-row" data-component="api">
              <div className="card-main">
                <strong>API server</strong>
                <span className="k ellipsis">
                  {r.id} · {r.version} · seen {clockTime(r.lastSeen)}
                </span>
                <MemoryLine memory={r.memory} />
              </div>
            </li>
          ))}
          {cs.controllers.map((c) => (
            <li key={`controller/${c.id}`} className="card-row" data-component="controller">
              <div className="card-main">
                <strong>
                  Controller shard {c.shard} · {c.leader ? 'leader' : 'standby'}
                </strong>
                <span className="k ellipsis">
                  {c.id} · {c.version} · seen {clockTime(c.lastSeen)}
                </span>
                {c.clusters.length ? <span className="k ellipsis">caches: {c.clusters.join(', ')}</span> : null}
                <MemoryLine memory={c.memory} />
              </div>
            </li>
          ))}
          <ProbeRow label="Repository server" probe={cs.repoServer} />
          {redis ? (
            <ProbeRow
              label="Redis"
              probe={{ name: redis.address, reachable: redis.reachable, message: redis.message }}
              extra={redis.reachable ? `${redis.version} · ${Math.round(redis.usedMemoryBytes / 1024 / 1024)} MiB used` : undefined}
            />
          ) : null}
          <ProbeRow label="Dex" probe={cs.dex} />
        </ul>
      ) : null}
    </section>
  )
}
