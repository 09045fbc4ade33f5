import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../support/node-entry-bundle.js'

// `npx ptykit-pty-host --help`, what a person who meets the bin first types. Before: the flag was
// read as one that takes a value — "The flag --help needs a value", exit 2, no usage anywhere.
const HOST_MAIN = resolve(import.meta.dirname, '../../src/pty-host/host-main.ts')
const run = (...args: string[]) => spawnSync(process.execPath, [...nodeArgsFor(HOST_MAIN), ...args], { encoding: 'utf8', timeout: 10_000 })

describe('ptykit-pty-host --help', () => {
  it.each(['--help', '-h'])('%s prints the usage with every flag and exits 0, starting no host', (flag) => {
    const result = run(flag)
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
    expect(result.stdout).toMatch(/^Usage: ptykit-pty-host /)
    for (const option of ['--socket', '--idle-exit-ms', '--history-chars', '--scrollback-rows', '--exited-history-bytes', '--exited-session-memory', '--screen-chars-per-second', '--ack-max-hold-ms']) {
      expect(result.stdout).toContain(option)
    }
  })

  it.each([
    [['--socket', '/tmp/ptykit-h.sock', '--help']],
    [['-h', '--idle-exit-ms', '5']],
  ])('%j: --help among other flags prints the usage and exits 0, starting no host', (args) => {
    const result = run(...args)
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
    expect(result.stdout).toMatch(/^Usage: ptykit-pty-host /)
  })

  it('a bad flag still exits 2, naming it and pointing at --help', () => {
    const result = run('--bogus', '1')
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('Unknown flag "--bogus" (see ptykit-pty-host --help)')
  })
})
