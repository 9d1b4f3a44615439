// Which controls the caller may use, asked of the server with me.can
// exactly as it will decide: one query for a batch of objects.
import { useEffect, useMemo, useState } from 'react'
import { useClient, type Client } from 'urql'

/**
 * appObject is an application's RBAC object as the server forms it:
 * "<project>/<name>" in the server's own namespace, "<project>/<namespace>/<name>"
 * elsewhere.
 */
export function appObject(app: { project: string; namespace: string; name: string }, serverNamespace: string): string {
  return app.namespace === serverNamespace ? `${app.project}/${app.name}` : `${app.project}/${app.namespace}/${app.name}`
}

/** canQuery asks whether the caller may do action on each of objects (aliases c0, c1 ...). */
export function canQuery(resource: string, action: string, objects: string[]): string {
  const fields = objects.map(
    (o, i) => `c${i}: can(resource: ${JSON.stringify(resource)}, action: ${JSON.stringify(action)}, object: ${JSON.stringify(o)})`,
  )
  return `query Can { me { ${fields.join(' ')} } }`
}

/** canAnswers maps a canQuery answer back to its objects; missing answers are "no". */
export function canAnswers(objects: string[], me: Record<string, unknown> | null | undefined): Map<string, boolean> {
  const out = new Map<string, boolean>()
  objects.forEach((o, i) => out.set(o, me?.[`c${i}`] === true))
  return out
}

/**
 * Permissions remembers the answers to me.can for one resource and action,
 * asking the server for the objects components need in batches: every
 * object requested in the same tick goes into one query, and none is asked
 * twice.
 */
export class Permissions {
  private readonly answers = new Map<string, boolean>()
  private readonly pending = new Set<string>()
  private readonly listeners = new Set<() => void>()
  private scheduled = false
  private readonly ask: (objects: string[]) => Promise<Map<string, boolean>>

  constructor(ask: (objects: string[]) => Promise<Map<string, boolean>>) {
    this.ask = ask
  }

  /** get is the answer for object: true, false, or undefined while unknown (then it is asked). */
  get(object: string): boolean | undefined {
    const a = this.answers.get(object)
    if (a === undefined && !this.pending.has(object)) {
      this.pending.add(object)
      this.schedule()
    }
    return a
  }

  subscribe = (f: () => void): (() => void) => {
    this.listeners.add(f)
    return () => this.listeners.delete(f)
  }

  private schedule() {
    if (this.scheduled) return
    this.scheduled = true
    setTimeout(() => void this.flush(), 0)
  }

  private async flush() {
    this.scheduled = false
    const objects = [...this.pending].filter((o) => !this.answers.has(o))
    for (let i = 0; i < objects.length; i += MAX_BATCH) {
      const batch = objects.slice(i, i + MAX_BATCH)
      let got: Map<string, boolean>
      try {
        got = await this.ask(batch)
      } catch {
        got = new Map(batch.map((o) => [o, false])) // unknown: keep the control hidden
      }
      for (const o of batch) {
        this.answers.set(o, got.get(o) === true)
        this.pending.delete(o)
      }
      for (const f of this.listeners) f()
    }
  }
}

// Each can() costs one against the server's complexity limit; 100 keep a
// query small.
const MAX_BATCH = 100

/** serverPermissions asks client's server about resource and action. */
export function serverPermissions(client: Client, resource: string, action: string): Permissions {
  return new Permissions(async (objects) => {
    const res = await client.query(canQuery(resource, action, objects), {}, { requestPolicy: 'network-only' }).toPromise()
    if (res.error) throw res.error
    return canAnswers(objects, (res.data as { me?: Record<string, unknown> } | undefined)?.me)
  })
}

/**
 * useCan answers me.can for one resource and action, per object, batching
 * the questions as the applications list does; undefined while unknown.
 */
export function useCan(resource: string, action: string): (object: string) => boolean | undefined {
  const client = useClient()
  const permissions = useMemo(() => serverPermissions(client, resource, action), [client, resource, action])
  // Re-render when answers arrive.
  const [, setAnswers] = useState(0)
  useEffect(() => permissions.subscribe(() => setAnswers((n) => n + 1)), [permissions])
  return (object) => permissions.get(object)
}
