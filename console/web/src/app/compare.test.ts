import { describe, expect, it } from 'vitest'
import { comparedTexts, project } from './compare'

const desired = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: web:1
`

const live = `apiVersion: apps/v1
kind: Deployment
metadata:
  uid: 1234
  resourceVersion: "99"
  labels:
    app: web
  name: web
spec:
  progressDeadlineSeconds: 600
  replicas: 3
  template:
    spec:
      containers:
      - image: web:1
        imagePullPolicy: IfNotPresent
        name: web
status:
  replicas: 3
`

describe('comparedTexts', () => {
  it('leaves only the fields Git sets, so one change is one line', () => {
    const c = comparedTexts(live, desired)
    expect(c.live).not.toContain('uid')
    expect(c.live).not.toContain('status')
    expect(c.live).not.toContain('imagePullPolicy')
    const l = c.live.split('\n')
    const d = c.desired.split('\n')
    expect(l.length).toBe(d.length)
    expect(l.filter((line, i) => line !== d[i])).toEqual(['  replicas: 3'])
  })

  it('keeps fields desired has and live lacks absent, so they show as a change', () => {
    const c = comparedTexts('kind: ConfigMap\ndata:\n  a: "1"\n', 'kind: ConfigMap\ndata:\n  a: "1"\n  b: "2"\n')
    expect(c.live).not.toContain('b:')
    expect(c.desired).toContain('b: "2"')
  })

  it('keeps list items live has beyond desired', () => {
    expect(project([{ a: 1, x: 2 }, { b: 1 }], [{ a: 1 }])).toEqual([{ a: 1 }, { b: 1 }])
  })

  it('returns texts it cannot compare as they are', () => {
    expect(comparedTexts('', desired)).toEqual({ live: '', desired })
    expect(comparedTexts('a: [', desired)).toEqual({ live: 'a: [', desired })
    expect(comparedTexts('- a\n', 'b: 1\n')).toEqual({ live: '- a\n', desired: 'b: 1\n' })
  })
})
