import { describe, expect, it } from 'vitest'
import { destinationText } from './format'

describe('destinationText', () => {
  it('prefers the cluster name and adds the namespace when there is one', () => {
    expect(destinationText({ name: 'prod', server: 'https://a', namespace: 'web' })).toBe('prod / web')
    expect(destinationText({ name: '', server: 'https://a', namespace: '' })).toBe('https://a')
  })
})
