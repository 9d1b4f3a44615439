import { CombinedError } from 'urql'
import { describe, expect, it } from 'vitest'
import { errorState } from './loadState'

function gqlError(code: string, message: string): CombinedError {
  return new CombinedError({ graphQLErrors: [{ message, extensions: { code } }] })
}

describe('errorState', () => {
  it('tells forbidden, missing, unreachable and other failures apart', () => {
    expect(errorState(gqlError('FORBIDDEN', 'permission denied'))).toEqual({ kind: 'forbidden', message: 'permission denied' })
    expect(errorState(gqlError('NOT_FOUND', 'no such app'))).toEqual({ kind: 'notFound' })
    expect(errorState(new CombinedError({ networkError: new Error('Failed to fetch') })).kind).toBe('error')
    expect(errorState(gqlError('INTERNAL', 'internal error (request abc)'))).toEqual({ kind: 'error', message: 'internal error (request abc)' })
  })
})
