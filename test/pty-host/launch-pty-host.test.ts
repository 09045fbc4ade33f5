import { readdirSync, rmSync } from 'node:fs'
import { launchPtyHost, type PtyHostCommand, type PtyHostLaunchFlags } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { HOST_FROM_SOURCES, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

function socketDir(): { dir: string; socketPath: string } {
  const made = makeSocketDir()
  cleanups.push(async () => rmSync(made.dir, { recursive: true, force: true }))
  return made
}

describe('launchPtyHost: every argument is checked before anything starts', () => {
  it.each<[string, unknown, unknown, string, unknown, string]>([
    // Before: "Cannot read properties of undefined (reading 'file')".
    ['no arguments', undefined, undefined, 'command', undefined, 'an object { file: string, args: string[] }'],
    ['no command file', { args: [] }, { socketPath: '/nonexistent/ptykit/x.sock' }, 'command.file', undefined, 'a non-empty string'],
    ['an empty command file', { file: '', args: [] }, { socketPath: '/nonexistent/ptykit/x.sock' }, 'command.file', '', 'a non-empty string'],
    // Before: spread into the characters "a", "b", "c".
    ['args as a string', { file: process.execPath, args: 'abc' }, { socketPath: '/nonexistent/ptykit/x.sock' }, 'command.args', 'abc', 'an array of strings'],
    ['an argument that is no string', { file: process.execPath, args: [1] }, { socketPath: '/nonexistent/ptykit/x.sock' }, 'command.args[0]', 1, 'a string'],
    // Before: "Cannot read properties of undefined (reading 'socketPath')".
    ['no flags', HOST_FROM_SOURCES, undefined, 'flags', undefined, 'an object'],
    // Before: started `… --socket undefined`, and returned its pid.
    ['flags without a socket path', HOST_FROM_SOURCES, {}, 'socketPath', undefined, 'a non-empty string'],
    // Before: returned the pid of a host that exited at once, its stderr discarded.
    ['a relative socket path', HOST_FROM_SOURCES, { socketPath: 'rel.sock' }, 'socketPath', 'rel.sock', 'an absolute path'],
    ['an idleExitMs that is no number', HOST_FROM_SOURCES, { socketPath: '/nonexistent/ptykit/x.sock', idleExitMs: 'abc' }, 'idleExitMs', 'abc', 'a non-negative integer'],
    ['a historyChars of 0', HOST_FROM_SOURCES, { socketPath: '/nonexistent/ptykit/x.sock', historyChars: 0 }, 'historyChars', 0, 'a positive integer'],
    ['a fractional scrollbackRows', HOST_FROM_SOURCES, { socketPath: '/nonexistent/ptykit/x.sock', scrollbackRows: 1.5 }, 'scrollbackRows', 1.5, 'a non-negative integer'],
  ])('%s: refused as invalid_option naming the option and the value', (_label, command, flags, option, value, expected) => {
    expect(() => launchPtyHost(command as PtyHostCommand, flags as PtyHostLaunchFlags)).toThrow(
      expect.objectContaining({ code: 'invalid_option', option, value, message: expect.stringContaining(`\`${option}\` option to be ${expected}`) }),
    )
  })

  it('a program file that does not exist is refused naming command.file and why, nothing started (before: it returned undefined)', () => {
    const { dir, socketPath } = socketDir()
    const file = '/nonexistent/ptykit-no-such-program'
    expect(() => launchPtyHost({ file, args: [] }, { socketPath })).toThrow(
      expect.objectContaining({ code: 'invalid_option', option: 'command.file', value: file, message: expect.stringContaining('does not exist') }),
    )
    expect(readdirSync(dir)).toEqual([])
  })

  it('a provider whose hostCommand names a missing program fails its spawn at once naming hostCommand.file, not after connectTimeoutMs', async () => {
    const { socketPath } = socketDir()
    const file = '/nonexistent/ptykit-no-such-host'
    // A connect timeout far beyond the test's: before, the spawn polled the socket until then.
    const app = providerOn(socketPath, { hostCommand: { file, args: [] }, connectTimeoutMs: 600_000 })
    cleanups.push(() => app.dispose())
    await expect(app.spawn({ file: '/bin/sh' })).rejects.toMatchObject({ code: 'invalid_option', option: 'hostCommand.file', value: file })
  })
})

/**
 * A Node flag that makes `@xterm/*` unresolvable in the process it starts, as in a project that
 * installed ptykit without the pty host's optional peers.
 */
const WITHOUT_XTERM = [
  '--import',
  `data:text/javascript,import { register } from 'node:module'; register(${JSON.stringify(
    "data:text/javascript,export async function resolve(specifier, context, next) { if (specifier.startsWith('@xterm/')) throw Object.assign(new Error('Cannot find package ' + specifier), { code: 'ERR_MODULE_NOT_FOUND' }); return next(specifier, context) }",
  )})`,
]

describe('a host that cannot load its @xterm peers', () => {
  it('fails the spawn with host_unavailable saying what to install (before: "ended (exit code 1) … run its command to see why")', async () => {
    const { dir, socketPath } = socketDir()
    const hostCommand = { file: process.execPath, args: [...WITHOUT_XTERM, ...HOST_FROM_SOURCES.args] }
    const app = providerOn(socketPath, { hostCommand, connectTimeoutMs: 600_000 })
    cleanups.push(() => app.dispose())
    await expect(app.spawn({ file: '/bin/sh' })).rejects.toMatchObject({
      code: 'host_unavailable',
      message: expect.stringContaining('could not load @xterm/headless or @xterm/addon-serialize, optional peers of ptykit it needs — npm install @xterm/headless @xterm/addon-serialize'),
    })
    // Nothing of a host is left: no socket, no secret.
    expect(readdirSync(dir).filter((name) => !name.endsWith('.journal'))).toEqual([])
  })
})
