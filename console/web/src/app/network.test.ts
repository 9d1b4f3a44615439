import { describe, expect, it } from 'vitest'
import { buildNetwork, ingressBackends, ingressHosts, parseLive, podLabels, selects, type LiveObject } from './network'
import type { TreeResource } from './tree'

function res(group: string, kind: string, name: string, parent?: string): TreeResource {
  return { group, kind, namespace: 'ns', name, uid: `${kind}/${name}`, parentRefs: parent ? [{ uid: parent }] : [], health: null, sync: null, info: [], images: [], missing: false }
}

const tree = [
  res('networking.k8s.io', 'Ingress', 'web'),
  res('', 'Service', 'web'),
  res('', 'Service', 'db'),
  res('', 'Service', 'manual'),
  res('apps', 'Deployment', 'web'),
  res('apps', 'ReplicaSet', 'web-1', 'Deployment/web'),
  res('', 'Pod', 'web-1-a', 'ReplicaSet/web-1'),
  res('', 'Pod', 'web-1-b', 'ReplicaSet/web-1'),
  res('apps', 'StatefulSet', 'db'),
  res('', 'Pod', 'db-0', 'StatefulSet/db'),
]

const live = (group: string, kind: string, name: string, yaml: string): LiveObject => ({ group, kind, namespace: 'ns', name, live: yaml })

const objects = [
  live('networking.k8s.io', 'Ingress', 'web', 'spec:\n  rules:\n  - host: web.example.com\n    http:\n      paths:\n      - backend:\n          service: {name: web}\n      - backend:\n          service: {name: gone}\n'),
  live('', 'Service', 'web', 'spec:\n  selector: {app: web}\n'),
  live('', 'Service', 'db', 'spec:\n  selector: {app: db}\n'),
  live('', 'Service', 'manual', 'spec: {}\n'),
  live('apps', 'Deployment', 'web', 'spec:\n  template:\n    metadata:\n      labels: {app: web, tier: front}\n'),
  live('apps', 'StatefulSet', 'db', 'spec:\n  template:\n    metadata:\n      labels: {app: db}\n'),
  // Not in the tree: never shown.
  live('', 'Service', 'elsewhere', 'spec:\n  selector: {app: web}\n'),
]

describe('buildNetwork', () => {
  it('follows Ingress → Service → workload → Pods', () => {
    const n = buildNetwork(tree, objects)
    expect(n.ingresses.map((i) => [i.resource.name, i.hosts, i.backends])).toEqual([['web', ['web.example.com'], ['web', 'gone']]])
    expect(n.services.map((s) => [s.resource.name, s.exposed, s.workloads.map((w) => w.name), s.pods.map((p) => p.name)])).toEqual([
      ['db', false, ['db'], ['db-0']],
      ['manual', false, [], []],
      ['web', true, ['web'], ['web-1-a', 'web-1-b']],
    ])
  })
  it('gives fewer edges, not an error, for bad manifests', () => {
    const bad = [live('', 'Service', 'web', ':: not yaml ['), live('apps', 'Deployment', 'web', '42'), live('networking.k8s.io', 'Ingress', 'web', '')]
    const n = buildNetwork(tree, bad)
    expect(n.services.map((s) => [s.resource.name, s.pods.length])).toEqual([['web', 0]])
    expect(n.ingresses.map((i) => i.backends)).toEqual([[]])
  })
})

describe('pieces', () => {
  it('reads backends of both Ingress forms and the default backend', () => {
    expect(ingressBackends(parseLive('spec:\n  defaultBackend: {service: {name: a}}\n  rules: [{http: {paths: [{backend: {serviceName: b}}, {backend: {service: {name: a}}}]}}]\n'))).toEqual(['a', 'b'])
    expect(ingressHosts(parseLive('spec:\n  rules: [{host: x}, {host: x}, {}]\n'))).toEqual(['x'])
  })
  it('matches selectors against Pod template labels; an empty selector matches nothing', () => {
    expect(selects({ app: 'web' }, { app: 'web', tier: 'x' })).toBe(true)
    expect(selects({ app: 'web', tier: 'y' }, { app: 'web', tier: 'x' })).toBe(false)
    expect(selects({}, { app: 'web' })).toBe(false)
    expect(podLabels(parseLive('metadata:\n  labels: {a: b}\n'), 'Pod')).toEqual({ a: 'b' })
    expect(podLabels(parseLive('spec:\n  jobTemplate:\n    spec:\n      template:\n        metadata:\n          labels: {c: d, n: 1}\n'), 'CronJob')).toEqual({ c: 'd' })
  })
})
