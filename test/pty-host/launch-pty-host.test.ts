import { readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { launchPtyHost, type PtyHostCommand, type PtyHostLaunchFlags } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { openHostLogForLaunch, PTY_HOST_LOG_MAX_BYTES, PTY_HOST_LOG_QUOTE_BYTES, readHostLogSince } from '../../src/pty-host/host-log.js'
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
    // Nothing of a host is left: no socket, no secret (its log stays, for whoever looks).
    expect(readdirSync(dir).filter((name) => !name.endsWith('.journal') && !name.endsWith('.log'))).toEqual([])
  })
})

describe("the host's log: what a host that fails to start says reaches the app", () => {
  it('a hostCommand whose script does not exist fails the spawn quoting Node\'s own error (before: "ended (exit code 1)… Its stderr is discarded")', async () => {
    const { socketPath } = socketDir()
    const script = '/nonexistent/ptykit/host-main.js'
    const app = providerOn(socketPath, { hostCommand: { file: process.execPath, args: [script] }, connectTimeoutMs: 600_000 })
    cleanups.push(() => app.dispose())
    const refusal = (await app.spawn({ file: '/bin/sh' }).catch((error: unknown) => error)) as Error & { code?: string }
    expect(refusal.code).toBe('host_unavailable')
    expect(refusal.message).toContain('ended (exit code 1) before it listened')
    expect(refusal.message).toContain(`It said (${socketPath}.log): `)
    expect(refusal.message).toContain(`Cannot find module '${script}'`)
    expect(statSync(`${socketPath}.log`).mode & 0o777).toBe(0o600)
  })

  it('a host that refuses its command line says which flag, stamped with its pid and the time', async () => {
    const { socketPath } = socketDir()
    const app = providerOn(socketPath, { hostCommand: { file: process.execPath, args: [...HOST_FROM_SOURCES.args, '--bogus', '1'] }, connectTimeoutMs: 600_000 })
    cleanups.push(() => app.dispose())
    const refusal = (await app.spawn({ file: '/bin/sh' }).catch((error: unknown) => error)) as Error
    expect(refusal.message).toContain('ended (exit code 2) before it listened')
    expect(refusal.message).toMatch(/It said \([^)]*\): \d{4}-\d\d-\d\dT[\d:.]+Z ptykit-pty-host\[\d+\]: Unknown flag "--bogus"/)
  })

  it('a second failure quotes only what its own host wrote, not the log of an earlier launch', async () => {
    const { socketPath } = socketDir()
    writeFileSync(`${socketPath}.log`, 'an earlier host said this\n', { mode: 0o600 })
    const hostCommand = { file: process.execPath, args: ['-e', 'process.stderr.write("this launch says why"); process.exit(1)', '--'] }
    const app = providerOn(socketPath, { hostCommand, connectTimeoutMs: 600_000 })
    cleanups.push(() => app.dispose())
    const refusal = (await app.spawn({ file: '/bin/sh' }).catch((error: unknown) => error)) as Error
    expect(refusal.message).toContain('It said (')
    expect(refusal.message).toContain('this launch says why')
    expect(refusal.message).not.toContain('an earlier host said this')
    expect(readFileSync(`${socketPath}.log`, 'utf8')).toBe('an earlier host said this\nthis launch says why')
  })

  it('a host that fails in silence is named as such, with its command to run by hand', async () => {
    const { socketPath } = socketDir()
    const app = providerOn(socketPath, { hostCommand: { file: process.execPath, args: ['-e', 'process.exit(7)', '--'] }, connectTimeoutMs: 600_000 })
    cleanups.push(() => app.dispose())
    const refusal = (await app.spawn({ file: '/bin/sh' }).catch((error: unknown) => error)) as Error
    expect(refusal.message).toContain(`ended (exit code 7) before it listened. It wrote nothing to its log ${socketPath}.log; run its command to see why: `)
  })

  it('a log past its bound is started afresh at the next launch; a log that is a symbolic link is not written through', () => {
    const { dir, socketPath } = socketDir()
    const logPath = `${socketPath}.log`
    writeFileSync(logPath, 'x'.repeat(PTY_HOST_LOG_MAX_BYTES + 1), { mode: 0o600 })
    const log = openHostLogForLaunch(logPath)
    expect(log).toMatchObject({ path: logPath, startOffset: 0 })
    expect(statSync(logPath).size).toBe(0)
    writeFileSync(log!.fd, `${'y'.repeat(PTY_HOST_LOG_QUOTE_BYTES)}the end`)
    // The newest part of a long text, marked as cut.
    expect(readHostLogSince(log!)).toBe(`…${'y'.repeat(PTY_HOST_LOG_QUOTE_BYTES - 'the end'.length)}the end`)

    const elsewhere = join(dir, 'elsewhere')
    writeFileSync(elsewhere, '', { mode: 0o600 })
    const linked = join(dir, 'linked.sock.log')
    symlinkSync(elsewhere, linked)
    expect(openHostLogForLaunch(linked)).toBeNull()
    writeFileSync(join(dir, 'open.sock.log'), '', { mode: 0o644 })
    expect(openHostLogForLaunch(join(dir, 'open.sock.log'))).toBeNull()
  })
})
