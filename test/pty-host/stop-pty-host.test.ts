/**
 * `stopPtyHost`: an app's "restart the terminal host" — the host found by its lock, trusted only as
 * the process that wrote it, stopped with its sessions; never a process a reused pid now names.
 */
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { Socket } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { PtyExitEvent } from 'ptykit/contracts'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { isPtyHostError, stopPtyHost } from 'ptykit/pty-host'
import { parseProcStat } from '../../src/node-pty/process-inspector.js'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { hostPid, inProcessHost, isAlive, killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A socket directory removed (and its host, if any, killed) after the test. */
function socketDir(): { dir: string; socketPath: string } {
  const made = makeSocketDir()
  cleanups.push(() => killHostAndClean(made.socketPath, made.dir))
  return made
}

/**
 * A child process running `script` (killed after the test), once it printed its first line, and
 * its start time as /proc says it.
 */
async function child(script: string): Promise<{ pid: number; startTime: string }> {
  const started = spawn('/bin/sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] })
  cleanups.push(async () => void started.kill('SIGKILL'))
  await new Promise((resolve) => started.stdout.once('data', resolve))
  const pid = started.pid!
  return { pid, startTime: parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))!.startTime! }
}

/** The code of the error `promise` rejects with. */
const codeOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (isPtyHostError(error) ? error.code : error),
  )

describe('stopPtyHost', () => {
  it('stops a running host and every session it holds; a connected app learns how each ended; the files go', async () => {
    const { socketPath } = socketDir()
    const app = providerOn(socketPath)
    const controller = createPtyController({ provider: app })
    cleanups.push(() => app.dispose(), () => controller.dispose())
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    let output = ''
    controller.on('data', ({ data }) => (output += data))
    const sessions = await Promise.all(['a', 'b', 'c'].map((name) => controller.spawn({ file: '/bin/sh', args: ['-c', `echo ready-${name}; exec sleep 600`] })))
    await waitFor(() => (['a', 'b', 'c'].every((name) => output.includes(`ready-${name}`)) ? true : undefined), 'the sessions to run')
    const host = hostPid(socketPath)!
    expect(isAlive(host)).toBe(true)

    expect(await stopPtyHost({ socketPath })).toBe(true)
    expect(isDead(host)).toBe(true)
    for (const { pid } of sessions) expect(isDead(pid!)).toBe(true)
    for (const file of [socketPath, `${socketPath}.secret`, `${socketPath}.lock`]) expect(existsSync(file)).toBe(false)
    // The app saw each session end — not unverifiable (before: the host dropped its clients first,
    // and every session stayed unknown to the app) — as the operator close a host's stop is, not as
    // the hang-up's signal (before 6 Dec: signaled(1), the exit claiming no stop had been asked).
    await waitFor(() => (exits.length === 3 ? true : undefined), 'the exits of the three sessions')
    expect(exits.map((exit) => exit.cause)).toEqual([1, 2, 3].map(() => ({ kind: 'operator_close' })))
    expect(exits.map((exit) => exit.incarnationId).sort()).toEqual(sessions.map((reply) => reply.incarnationId).sort())
    await waitFor(() => (app.connected ? undefined : true), 'the app to see the host gone')
    // Nothing left to stop.
    expect(await stopPtyHost({ socketPath })).toBe(false)
  }, 30_000)

  it('while a host closes, a spawn is refused host_unavailable, a stop joins the close, and the stubborn session still gets its exit', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.detach())
    const exits: PtyExitEvent[] = []
    app.onExit((event) => exits.push(event))
    let output = ''
    app.onData(({ data }) => (output += data))
    // Ignores the hang-up and SIGTERM: the host's stop of it takes its full graces.
    const stubborn = await app.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP TERM; echo ready; while :; do sleep 0.05; done"] })
    await waitFor(() => (output.includes('ready') ? true : undefined), 'the session to run')
    const closing = host.close()
    // Before: the host's disposed provider refused it, which the app read as `host_error` with
    // `provider_disposed` — the state of a provider, not that the host is going away.
    await expect(app.spawn({ file: 'cat' })).rejects.toMatchObject({ code: 'host_unavailable', message: expect.stringMatching(/closing/) })
    // A question is still answered.
    expect(await app.getCwd(stubborn.id)).toEqual(expect.any(String))
    // A stop racing the close joins the close's stop of that session: it resolves once it ended.
    const stop = app.shutdown(stubborn.id)
    await closing
    await expect(stop).resolves.toBeUndefined()
    expect(exits.map((exit) => [exit.id, exit.cause])).toEqual([[stubborn.id, { kind: 'signaled', signal: 9 }]])
  }, 20_000)

  it('a spawn already in the host\'s hands when it starts closing is refused host_unavailable, its reply not lost', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.detach())
    await app.listProcesses()
    // The host begins to close right after its side of the connection read the spawn request.
    const emit = Socket.prototype.emit
    let closing: Promise<void> | undefined
    Socket.prototype.emit = function (this: Socket, event: string | symbol, ...args: unknown[]): boolean {
      const handled = (emit as (this: Socket, event: string | symbol, ...rest: unknown[]) => boolean).call(this, event, ...args)
      if (closing === undefined && event === 'data' && String(args[0]).includes('"spawn"')) closing = host.close()
      return handled
    } as typeof Socket.prototype.emit
    let outcome: unknown
    try {
      outcome = await codeOf(app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 5'] }))
    } finally {
      Socket.prototype.emit = emit
    }
    expect(closing).toBeDefined()
    await closing
    // Before: the host dropped the connection before the spawn's handler replied: transport_lost,
    // which leaves the app unsure whether a session started.
    expect(outcome).toBe('host_unavailable')
  }, 20_000)

  it('answers false where no host runs: no directory, no lock, a lock of a dead process', async () => {
    const { dir, socketPath } = socketDir()
    expect(await stopPtyHost({ socketPath: join(dir, 'absent', 'host.sock') })).toBe(false)
    expect(await stopPtyHost({ socketPath })).toBe(false)
    const gone = spawn('/bin/true')
    await new Promise((resolve) => gone.once('exit', resolve))
    writeFileSync(`${socketPath}.lock`, String(gone.pid), { mode: 0o600 })
    expect(await stopPtyHost({ socketPath })).toBe(false)
  })

  it('never signals a process whose pid the lock names but which did not write it (another start time)', async () => {
    const { socketPath } = socketDir()
    const bystander = await child('echo ready; exec sleep 600')
    // The pid of a host that died, since reused by an unrelated program.
    writeFileSync(`${socketPath}.lock`, `${bystander.pid}\n${Number(bystander.startTime) - 1}`, { mode: 0o600 })
    expect(await stopPtyHost({ socketPath })).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(isAlive(bystander.pid)).toBe(true)
  })

  it('rejects stop_timeout when the holder has not exited by timeoutMs, and sends it SIGTERM only', async () => {
    const { socketPath } = socketDir()
    const stubborn = await child("trap '' TERM; echo ready; while :; do sleep 0.05; done")
    writeFileSync(`${socketPath}.lock`, `${stubborn.pid}\n${stubborn.startTime}`, { mode: 0o600 })
    const started = Date.now()
    expect(await codeOf(stopPtyHost({ socketPath, timeoutMs: 300 }))).toBe('stop_timeout')
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    expect(isAlive(stubborn.pid)).toBe(true)
  })

  it('refuses an in-process host, malformed options and a directory others can enter — signalling nothing', async () => {
    const { dir, socketPath } = socketDir()
    const host = await inProcessHost(cleanups)
    const refused = await stopPtyHost({ socketPath: host.socketPath }).catch((error: unknown) => error)
    expect(refused).toMatchObject({ code: 'invalid_option', option: 'socketPath', value: host.socketPath })
    expect((refused as Error).message).toMatch(/host\.close\(\)/)

    expect(await codeOf(stopPtyHost({ socketPath, timeoutMs: -1 }))).toBe('invalid_option')
    expect(await codeOf(stopPtyHost({ socketPath, timeoutMs: Number.NaN }))).toBe('invalid_option')
    expect(await codeOf(stopPtyHost({ socketPath: '' }))).toBe('invalid_option')
    expect(await codeOf(stopPtyHost(null as never))).toBe('invalid_option')

    const bystander = await child('echo ready; exec sleep 600')
    writeFileSync(`${socketPath}.lock`, `${bystander.pid}\n${bystander.startTime}`, { mode: 0o600 })
    chmodSync(dir, 0o755)
    // A lock in a directory others could write to could name any process: not trusted.
    expect(await codeOf(stopPtyHost({ socketPath }))).toBe('insecure_socket')
    expect(isAlive(bystander.pid)).toBe(true)
  })
})
