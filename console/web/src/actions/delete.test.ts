import { describe, expect, it } from 'vitest'
import { deleteInput } from './DeleteDialog'

describe('deleteInput', () => {
  const app = { name: 'web', namespace: 'graphcd' }
  it('maps each cascade choice onto cascade and propagation policy', () => {
    expect(deleteInput(app, 'foreground')).toEqual({ application: app, cascade: true, propagationPolicy: 'FOREGROUND' })
    expect(deleteInput(app, 'background')).toEqual({ application: app, cascade: true, propagationPolicy: 'BACKGROUND' })
    expect(deleteInput(app, 'none')).toMatchObject({ application: app, cascade: false })
  })
})
