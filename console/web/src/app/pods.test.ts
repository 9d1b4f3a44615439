import { describe, expect, it } from 'vitest'
import { groupPods, infoValue } from './pods'
import type { TreeResource } from './tree'

function res(kind: string, name: string, opts: { parent?: string; node?: string; health?: string } = {}): TreeResource {
  return {
    group: kind === 'ReplicaSet' || kind === 'StatefulSet' ? 'apps' : '',
    kind,
    namespace: 'ns',
    name,
    uid: `${kind}/${name}`,
    parentRefs: opts.parent ? [{ uid: opts.parent }] : [],
    health: opts.health ? { status: opts.health, message: '' } : null,
    sync: null,
    info: opts.node ? [{ name: 'Status Reason', value: 'Running' }, { name: 'Node', value: opts.node }] : [],
    images: [],
    missing: false,
  }
}

const tree = [
  res('ReplicaSet', 'web-1'),
  res('StatefulSet', 'db'),
  res('Pod', 'web-1-b', { parent: 'ReplicaSet/web-1', node: 'n2', health: 'Degraded' }),
  res('Pod', 'web-1-a', { parent: 'ReplicaSet/web-1', node: 'n1', health: 'Healthy' }),
  res('Pod', 'db-0', { parent: 'StatefulSet/db', node: 'n1', health: 'Healthy' }),
  res('Pod', 'pending', { parent: 'ReplicaSet/gone' }),
]

const shape = (gs: ReturnType<typeof groupPods>) => gs.map((g) => [g.label, g.health, g.pods.map((p) => p.name)])

describe('groupPods', () => {
  it('groups by owner, worst health first-class, the ownerless last', () => {
    expect(shape(groupPods(tree, 'parent'))).toEqual([
      ['ReplicaSet web-1', 'Degraded', ['web-1-a', 'web-1-b']],
      ['StatefulSet db', 'Healthy', ['db-0']],
      ['Without an owner in the application', null, ['pending']],
    ])
    expect(groupPods(tree, 'parent')[0]?.kind).toBe('ReplicaSet')
  })
  it('groups by node, the unscheduled last', () => {
    expect(shape(groupPods(tree, 'node'))).toEqual([
      ['n1', 'Healthy', ['db-0', 'web-1-a']],
      ['n2', 'Degraded', ['web-1-b']],
      ['Not scheduled on a node', null, ['pending']],
    ])
  })
  it('has no groups without Pods, and reads facts defensively', () => {
    expect(groupPods([res('Service', 'web')], 'node')).toEqual([])
    expect(infoValue(tree[2]!, 'Node')).toBe('n2')
    expect(infoValue({ ...tree[2]!, info: [null as unknown as { name: string; value: string }] }, 'Node')).toBe('')
  })
})
