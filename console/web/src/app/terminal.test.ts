import { describe, expect, it } from 'vitest'
import { closedText, output, resize, stdin, terminalURL } from './terminal'

describe('terminal protocol', () => {
  it('builds the socket URL on the page origin', () => {
    const t = { app: { name: 'web', namespace: 'team-a' }, namespace: 'web', pod: 'web-0', container: 'app' }
    expect(terminalURL({ protocol: 'https:', host: 'cd.example.com' }, t)).toBe(
      'wss://cd.example.com/api/terminal?app=web&namespace=web&pod=web-0&container=app&appNamespace=team-a',
    )
    expect(terminalURL({ protocol: 'http:', host: 'localhost:8080' }, { ...t, app: { name: 'web', namespace: null } })).toBe(
      'ws://localhost:8080/api/terminal?app=web&namespace=web&pod=web-0&container=app',
    )
  })

  it('encodes input and resizes as Argo CD does', () => {
    expect(JSON.parse(stdin('ls\r'))).toEqual({ operation: 'stdin', data: 'ls\r' })
    expect(JSON.parse(resize(24, 80))).toEqual({ operation: 'resize', rows: 24, cols: 80 })
  })

  it('reads only stdout messages', () => {
    expect(output('{"operation":"stdout","data":"héllo"}')).toBe('héllo')
    expect(output('{"operation":"other","data":"x"}')).toBeNull()
    expect(output('not json')).toBeNull()
    expect(output(new ArrayBuffer(2))).toBeNull()
  })

  it('says why a terminal closed', () => {
    expect(closedText(1000, 'the shell exited')).toBe('Closed: the shell exited.')
    expect(closedText(4403, 'permission denied: exec create default/web')).toBe('Closed: permission denied: exec create default/web.')
    expect(closedText(4500, '')).toBe('Closed (code 4500).')
    expect(closedText(1006, '')).toMatch(/lost/)
  })
})
