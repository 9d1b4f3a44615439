import { describe, expect, it } from 'vitest'
import { APP_ID, buildView, changedIds, childrenOf, groupId, kindAbbrev, nodeChanged, nodeId, tableRows, treeSummary, worstHealth, type TreeResource, type ViewOptions } from './tree'

function res(kind: string, name: string, parent?: string, health?: string, sync?: string): TreeResource {
  return {
    group: kind === 'Deployment' || kind === 'ReplicaSet' ? 'apps' : '',
    kind,
    namespace: 'ns',
    name,
    uid: `${kind}/${name}`,
    parentRefs: parent ? [{ uid: parent }] : [],
    health: health ? { status: health, message: '' } : null,
    sync: sync ?? null,
    info: [],
    images: [],
    missing: false,
  }
}

const none: ViewOptions = { collapsed: new Set(), expanded: new Set(), limit: 300 }

function deployment(pods: number): TreeResource[] {
  const out = [res('Deployment', 'web', undefined, 'Healthy', 'Synced'), res('ReplicaSet', 'web-1', 'Deployment/web', 'Healthy')]
  for (let i = 0; i < pods; i++) out.push(res('Pod', `web-1-${i}`, 'ReplicaSet/web-1', i === 1 ? 'Degraded' : 'Healthy'))
  return out
}

const ids = (v: ReturnType<typeof buildView>) => v.nodes.map((n) => n.id)
const edges = (v: ReturnType<typeof buildView>) => v.edges.map((e) => `${e.source}->${e.target}`)

describe('childrenOf', () => {
  it('puts objects without an owner in the tree under the application, sorted', () => {
    const c = childrenOf([res('Service', 'b'), res('ConfigMap', 'z'), res('Pod', 'orphan', 'ReplicaSet/gone')])
    expect(c.get(APP_ID)?.map((r) => r.uid)).toEqual(['ConfigMap/z', 'Pod/orphan', 'Service/b'])
  })
})

describe('buildView', () => {
  it('shows Deployment, ReplicaSet and a few Pods one by one', () => {
    const v = buildView(deployment(2), none)
    expect(ids(v)).toEqual([APP_ID, 'Deployment/web', 'ReplicaSet/web-1', 'Pod/web-1-0', 'Pod/web-1-1'])
    expect(edges(v)).toEqual(['app->Deployment/web', 'Deployment/web->ReplicaSet/web-1', 'ReplicaSet/web-1->Pod/web-1-0', 'ReplicaSet/web-1->Pod/web-1-1'])
    expect(v.total).toBe(5)
  })

  it('groups many Pods of one owner into a node with their worst health', () => {
    const v = buildView(deployment(12), none)
    const g = groupId('ReplicaSet/web-1', 'Pod')
    expect(ids(v)).toEqual([APP_ID, 'Deployment/web', 'ReplicaSet/web-1', g])
    const node = v.nodes[3]
    expect(node?.type === 'group' && node.members.length).toBe(12)
    expect(node?.type === 'group' && node.health).toBe('Degraded')
    expect(edges(v)).toContain(`ReplicaSet/web-1->${g}`)
  })

  it('shows the Pods of an expanded group one by one', () => {
    const g = groupId('ReplicaSet/web-1', 'Pod')
    const v = buildView(deployment(12), { ...none, expanded: new Set([g]) })
    expect(v.nodes).toHaveLength(15)
    expect(ids(v)).not.toContain(g)
  })

  it('leaves out the subtree of a collapsed node', () => {
    const v = buildView(deployment(3), { ...none, collapsed: new Set(['Deployment/web']) })
    expect(ids(v)).toEqual([APP_ID, 'Deployment/web'])
    const d = v.nodes[1]
    expect(d?.type === 'resource' && d.collapsed && d.hasChildren).toBe(true)
  })

  it('caps the nodes laid out and counts the rest', () => {
    const many = Array.from({ length: 5000 }, (_, i) => res('ConfigMap', `cm-${String(i).padStart(4, '0')}`))
    const v = buildView(many, { ...none, limit: 300 })
    expect(v.nodes).toHaveLength(300)
    expect(v.total).toBe(5001)
    expect(v.edges).toHaveLength(299)
    // No edge points at a node that is not shown.
    const shown = new Set(ids(v))
    expect(v.edges.every((e) => shown.has(e.source) && shown.has(e.target))).toBe(true)
  })

  it('shows an object with two owners once, with an edge from each', () => {
    const a = res('ConfigMap', 'a')
    const b = res('ConfigMap', 'b')
    const child = { ...res('Pod', 'shared'), parentRefs: [{ uid: a.uid }, { uid: b.uid }] }
    const v = buildView([a, b, child], none)
    expect(ids(v).filter((i) => i === child.uid)).toHaveLength(1)
    expect(edges(v)).toEqual(['app->ConfigMap/a', 'app->ConfigMap/b', 'ConfigMap/a->Pod/shared', 'ConfigMap/b->Pod/shared'])
  })

  it('survives an ownership cycle', () => {
    const a = { ...res('ConfigMap', 'a'), parentRefs: [{ uid: 'ConfigMap/b' }] }
    const b = { ...res('ConfigMap', 'b'), parentRefs: [{ uid: 'ConfigMap/a' }] }
    const v = buildView([a, b, res('Service', 's')], none)
    expect(ids(v)).toEqual([APP_ID, 'Service/s'])
  })
})

// Objects without a uid: resources Git declares that the cluster lacks,
// as the API sends them.
function uidless(kind: string, name: string): TreeResource {
  return { ...res(kind, name, undefined, 'Missing', 'OutOfSync'), uid: '', missing: true }
}

describe('nodeId', () => {
  it('is the uid, or group/kind/namespace/name for an object without one', () => {
    expect(nodeId(res('Pod', 'a'))).toBe('Pod/a')
    expect(nodeId(uidless('Deployment', 'web'))).toBe('apps/Deployment/ns/web')
    expect(nodeId({ ...uidless('ClusterRole', 'view'), group: 'rbac.authorization.k8s.io', namespace: '' })).toBe('rbac.authorization.k8s.io/ClusterRole//view')
  })

  it('shows objects without a uid as nodes of their own under the application', () => {
    const v = buildView([uidless('Service', 'web'), uidless('Deployment', 'web'), res('ConfigMap', 'live')], none)
    expect(ids(v)).toEqual([APP_ID, 'ConfigMap/live', 'apps/Deployment/ns/web', '/Service/ns/web'])
    expect(edges(v)).toEqual(['app->ConfigMap/live', 'app->apps/Deployment/ns/web', 'app->/Service/ns/web'])
  })

  it('tells a change of status of an object without a uid, not its creation', () => {
    const before = [uidless('Deployment', 'web')]
    const failed = [{ ...uidless('Deployment', 'web'), health: { status: 'Degraded', message: '' } }]
    expect([...changedIds(before, failed)]).toEqual(['apps/Deployment/ns/web'])
    // Created by a sync, it has a uid: a new node, not a changed one.
    expect(changedIds(before, [res('Deployment', 'web', undefined, 'Healthy', 'Synced')]).size).toBe(0)
  })
})

describe('missing resources', () => {
  // The demo's sync-waves before its first sync: nothing exists yet.
  const never = [uidless('Service', 'backend'), uidless('Deployment', 'frontend'), uidless('Deployment', 'backend')]

  it('fill the graph of a never-synced application, under the application, with their status', () => {
    const v = buildView(never, none)
    expect(ids(v)).toEqual([APP_ID, 'apps/Deployment/ns/backend', 'apps/Deployment/ns/frontend', '/Service/ns/backend'])
    const first = v.nodes[0]
    expect(first?.type === 'app' && first.hasChildren).toBe(true)
    for (const n of v.nodes.slice(1)) {
      expect(n.type === 'resource' && [n.resource.missing, n.resource.health?.status, n.resource.sync, n.hasChildren]).toEqual([true, 'Missing', 'OutOfSync', false])
    }
  })

  it('are rows of the table', () => {
    expect(tableRows(never).map((r) => `${r.kind}/${r.name} ${r.missing}`)).toEqual(['Deployment/backend true', 'Deployment/frontend true', 'Service/backend true'])
  })

  it('are counted above the tree', () => {
    expect(treeSummary(never, false)).toBe('3 resources, all missing: a sync creates them')
    expect(treeSummary([never[0]!], false)).toBe('1 resource, missing: a sync creates it')
    expect(treeSummary([...deployment(2), never[0]!], true)).toBe('5 resources, 1 missing: a sync creates it (the tree was cut to stay under the size limit)')
    expect(treeSummary(deployment(1), false)).toBe('3 resources')
    expect(treeSummary([], false)).toBe('0 resources')
  })

  it('give way to the live objects a sync creates', () => {
    const synced = [res('Service', 'backend', undefined, 'Healthy', 'Synced')]
    const v = buildView(synced, none)
    expect(ids(v)).toEqual([APP_ID, 'Service/backend'])
    expect(v.nodes[1]?.type === 'resource' && v.nodes[1].resource.missing).toBe(false)
  })
})

describe('changedIds', () => {
  it('finds resources whose health or sync changed', () => {
    const before = deployment(2)
    const after = deployment(2).map((r) => (r.uid === 'Deployment/web' ? { ...r, sync: 'OutOfSync' } : r.uid === 'Pod/web-1-0' ? { ...r, health: { status: 'Progressing', message: '' } } : r))
    expect([...changedIds(before, after)].sort()).toEqual(['Deployment/web', 'Pod/web-1-0'])
  })
  it('finds nothing on the first tree or for new resources', () => {
    expect(changedIds(null, deployment(2)).size).toBe(0)
    expect(changedIds(deployment(1), deployment(3)).size).toBe(0)
  })
  it('marks a group when one of its members changed', () => {
    const v = buildView(deployment(6), none)
    const group = v.nodes.find((n) => n.type === 'group')!
    expect(nodeChanged(group, new Set(['Pod/web-1-4']))).toBe(true)
    expect(nodeChanged(group, new Set(['Deployment/web']))).toBe(false)
  })
})

describe('worstHealth', () => {
  it('follows the order of concern', () => {
    expect(worstHealth([res('Pod', 'a', undefined, 'Healthy'), res('Pod', 'b', undefined, 'Progressing')])).toBe('Progressing')
    expect(worstHealth([res('Pod', 'a')])).toBeNull()
  })
})

describe('tableRows and kindAbbrev', () => {
  it('sorts by kind, namespace and name', () => {
    expect(tableRows([res('Pod', 'b'), res('ConfigMap', 'x'), res('Pod', 'a')]).map((r) => r.uid)).toEqual(['ConfigMap/x', 'Pod/a', 'Pod/b'])
  })
  it('uses short names', () => {
    expect(kindAbbrev('Deployment')).toBe('deploy')
    expect(kindAbbrev('MyCustomThing')).toBe('mct')
    expect(kindAbbrev('foo')).toBe('foo')
  })
})
