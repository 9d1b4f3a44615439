import { describe, expect, it } from 'vitest'
import { MASK, maskSecret } from './mask'

const masked = `apiVersion: v1
kind: Secret
metadata:
  name: db
data:
  password: ++++++++
  user: +++++++++
`

describe('maskSecret', () => {
  it('leaves a Secret the server masked as it is', () => {
    expect(maskSecret(masked)).toBe(masked)
  })

  it('masks data and stringData values that arrive in clear', () => {
    const out = maskSecret(`apiVersion: v1
kind: Secret
metadata:
  name: db
data:
  password: c2VjcmV0
  user: ++++++++
stringData:
  token: hunter2
`)
    expect(out).not.toContain('c2VjcmV0')
    expect(out).not.toContain('hunter2')
    expect(out).toContain(`password: ${MASK}\n`)
    expect(out).toContain('user: ++++++++')
    expect(out).toContain(`token: ${MASK}\n`)
  })

  it('masks a last-applied annotation that holds values', () => {
    const out = maskSecret(`apiVersion: v1
kind: Secret
metadata:
  name: db
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","kind":"Secret","data":{"password":"c2VjcmV0"}}'
data:
  password: ++++++++
`)
    expect(out).not.toContain('c2VjcmV0')
  })

  it('keeps a last-applied annotation the server masked', () => {
    const text = `apiVersion: v1
kind: Secret
metadata:
  name: db
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"++++++++"}}'
data:
  password: ++++++++
`
    expect(maskSecret(text)).toBe(text)
  })

  it('leaves other kinds alone, even with a data map', () => {
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  password: plain\n'
    expect(maskSecret(cm)).toBe(cm)
    const crd = 'apiVersion: example.com/v1\nkind: Secret\ndata:\n  x: y\n'
    expect(maskSecret(crd)).toBe(crd)
  })

  it('masks each Secret of a multi-document text', () => {
    const out = maskSecret('apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n---\napiVersion: v1\nkind: Secret\ndata:\n  k: djE=\n')
    expect(out).toContain('a: b')
    expect(out).not.toContain('djE=')
  })

  it('hides a Secret it cannot parse', () => {
    const out = maskSecret('kind: Secret\ndata:\n  k: [unclosed\n')
    expect(out).toMatch(/^# Hidden/)
  })

  it('returns empty text unchanged', () => {
    expect(maskSecret('')).toBe('')
  })
})
