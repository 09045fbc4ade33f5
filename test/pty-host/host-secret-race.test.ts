/**
 * An app that autostarts a host reads the secret file, then connects. A host that died without
 * cleaning up (SIGKILL, the OOM killer) leaves its socket and its secret behind; the host the app
 * starts replaces both — and when it writes its secret and starts listening between the app's read
 * and the app's connect, the app presents the dead host's secret to the live one and is refused
 * (`unauthorized`). While it autostarts, the app must read the secret again and retry; a secret
 * that is genuinely wrong still fails, typed and naming the cause, once `connectTimeoutMs` is up.
 *
 * A call that starts no host (a listing, a shutdown, dispose's connect, a reconnect, every call
 * with `autoStart: false`) meets the same race when a host started meanwhile (by another app): it
 * retries the refused secret the same way, and never starts a host.
 *
 * The interleaving is made deterministic by holding the app's connect (`connect-gate.ts`): the app
 * has then read the secret, and the connect goes out once the new host listens with its own.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { startPtyHost, type PtyHostCommand, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it, vi } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { connectGate } from './connect-gate.js'
import { launchPtyHost } from '../../src/pty-host/launch-pty-host.js'
import { HOST_FROM_SOURCES, hostPid, inProcessHost, isAlive, killHost, killHostAndClean, makeSocketDir, providerDisposedAfter, providerOn, runAppToEnd, useCleanups } from './pty-host-test-support.js'

vi.mock('node:net', async (importOriginal) => (await import('./connect-gate.js')).gatedNet(await importOriginal()))

const cleanups = useCleanups()

const provider = (socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): PtyHostProvider => providerDisposedAfter(cleanups, socketPath, extra)

/** Whether something accepts a connection on `socketPath` now (the connection is closed at once). */
function listens(socketPath: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection(socketPath)
    socket.once('connect', () => {
      socket.destroy()
      done(true)
    })
    socket.once('error', () => done(false))
  })
}

function readSecret(socketPath: string): string | null {
  try {
    return readFileSync(`${socketPath}.secret`, 'utf8').trim()
  } catch {
    return null
  }
}

/**
 * A host command that only records that it ran (one line in `marker`) and exits 0: a provider given
 * it shows whether it ever started a host.
 */
function recordingHostCommand(dir: string): { command: PtyHostCommand; started: () => boolean } {
  const marker = join(dir, 'host-started')
  return {
    command: { file: '/bin/sh', args: ['-c', 'echo started >> "$0"', marker] },
    started: () => existsSync(marker),
  }
}

/**
 * Leftovers of a host that died without cleaning up (a real host process, SIGKILLed): its socket,
 * secret and lock stay. Resolves with the dead host's secret.
 */
async function deadHostLeftovers(socketPath: string): Promise<string> {
  launchPtyHost(HOST_FROM_SOURCES, { socketPath, idleExitMs: 60_000 })
  await waitFor(async () => (readSecret(socketPath) !== null && (await listens(socketPath)) ? true : undefined), 'the first host to listen', 10_000)
  await killHost(socketPath)
  expect(existsSync(socketPath)).toBe(true)
  return readSecret(socketPath)!
}

describe('pty host: an app that autostarts a host reads a dead host’s secret', () => {
  it('reads the secret again and connects when the host it started refused the stale one', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => {
      connectGate.hold = null
      await killHostAndClean(socketPath, dir)
    })
    // A host that dies without cleaning up: its socket, secret and lock stay.
    launchPtyHost(HOST_FROM_SOURCES, { socketPath, idleExitMs: 60_000 })
    await waitFor(async () => (readSecret(socketPath) !== null && (await listens(socketPath)) ? true : undefined), 'the first host to listen', 10_000)
    const deadPid = hostPid(socketPath)!
    await killHost(socketPath)
    const staleSecret = readSecret(socketPath)!
    expect(existsSync(socketPath)).toBe(true)

    // Every connect to the socket except the app's first (which finds nobody listening and starts a
    // host) is held while the secret file is the dead host's, until the new host listens: it has
    // then replaced the secret the app just read.
    let connects = 0
    let held = 0
    connectGate.hold = (path) => {
      if (path !== socketPath) return null
      connects += 1
      if (connects === 1 || readSecret(socketPath) !== staleSecret) return null
      held += 1
      return waitFor(
        async () => {
          const secret = readSecret(socketPath)
          return secret !== null && secret !== staleSecret && (await listens(socketPath)) ? true : undefined
        },
        'the started host to listen with its own secret',
        10_000,
      ).then(() => undefined)
    }

    const app = provider(socketPath, { connectTimeoutMs: 8_000 })
    const outcome = await app.spawn({ file: 'cat' }).then(
      (result) => ({ ok: true as const, id: result.id }),
      (error: unknown) => ({ ok: false as const, code: (error as { code?: unknown }).code, message: String(error) }),
    )
    // The race was provoked: a connect went out with the dead host's secret to the new host.
    expect(held).toBeGreaterThanOrEqual(1)
    expect(outcome).toEqual({ ok: true, id: expect.any(String) })
    expect(hostPid(socketPath)).not.toBe(deadPid)
    expect(isAlive(hostPid(socketPath)!)).toBe(true)
  }, 30_000)

  it('fails with unauthorized, naming the secret file, after connectTimeoutMs when the secret is genuinely wrong — and leaves nothing holding the app open', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    // The secret file no longer matches the host that listens (written by hand, still 0600).
    writeFileSync(`${socketPath}.secret`, `${'0'.repeat(64)}\n`, { mode: 0o600 })
    const connectTimeoutMs = 1_500
    // An app process whose only work is this spawn: it must end on its own once the spawn failed.
    const { code: exitCode, printed } = await runAppToEnd(cleanups, 'app-spawns-once.ts', [socketPath, JSON.stringify(HOST_FROM_SOURCES), String(connectTimeoutMs)])
    expect(exitCode).toBe(0)
    const result = JSON.parse(printed.trim()) as { ok: boolean; code?: string; message?: string; afterMs: number; before: string[]; after: string[] }
    expect(result).toMatchObject({ ok: false, code: 'unauthorized' })
    expect(result.message).toContain(`${socketPath}.secret`)
    expect(result.afterMs).toBeGreaterThanOrEqual(connectTimeoutMs)
    // Nothing the provider opened is left: no connection, no timer.
    expect(result.after.sort()).toEqual(result.before.sort())
  }, 30_000)
})

describe('pty host: a call that starts no host reads a secret replaced since', () => {
  // Each call connects without starting a host: a listing (whatever `autoStart` says) and a spawn
  // of a provider with `autoStart: false`.
  const calls = [
    { name: 'listProcesses (autoStart on)', autoStart: true, call: (app: PtyHostProvider) => app.listProcesses().then(() => undefined) },
    { name: 'spawn (autoStart: false)', autoStart: false, call: (app: PtyHostProvider) => app.spawn({ file: 'cat' }).then(() => undefined) },
  ]
  for (const { name, autoStart, call } of calls) {
    it(`${name}: reads the secret again and connects when a host that started after its read refused the stale one, starting none`, async () => {
      const { dir, socketPath } = makeSocketDir()
      cleanups.push(async () => {
        connectGate.hold = null
        await killHostAndClean(socketPath, dir)
      })
      const staleSecret = await deadHostLeftovers(socketPath)
      const recording = recordingHostCommand(dir)

      // The app's first connect (it has read the dead host's secret) is held while another host
      // (here, in this process: another app's) starts, replaces the secret and listens; then it
      // goes out, with the stale secret, to the new host.
      let connects = 0
      let successor: Awaited<ReturnType<typeof startPtyHost>> | null = null
      connectGate.hold = (path) => {
        if (path !== socketPath) return null
        connects += 1
        if (connects > 1) return null
        expect(readSecret(socketPath)).toBe(staleSecret)
        return startPtyHost({ socketPath, idleExitMs: 60_000 }).then((host) => {
          successor = host
          cleanups.push(() => host.close())
        })
      }

      const app = provider(socketPath, { autoStart, hostCommand: recording.command, connectTimeoutMs: 5_000 })
      const outcome = await call(app).then(
        () => ({ ok: true as const }),
        (error: unknown) => ({ ok: false as const, code: (error as { code?: unknown }).code, message: String(error) }),
      )
      // The race was provoked: the held connect presented the dead host's secret to the new host.
      expect(successor).not.toBeNull()
      expect(readSecret(socketPath)).not.toBe(staleSecret)
      expect(outcome).toEqual({ ok: true })
      // Connected again with the new secret, to the host that started meanwhile; none was started.
      expect(connects).toBeGreaterThanOrEqual(2)
      expect(app.connected).toBe(true)
      expect(hostPid(socketPath)).toBe(process.pid)
      expect(recording.started()).toBe(false)
    }, 30_000)
  }

  it('a listing fails with unauthorized, naming the secret file, after connectTimeoutMs when the secret is genuinely wrong — and starts no host', async () => {
    const { dir, socketPath } = await inProcessHost(cleanups)
    writeFileSync(`${socketPath}.secret`, `${'0'.repeat(64)}\n`, { mode: 0o600 })
    const recording = recordingHostCommand(dir)
    const connectTimeoutMs = 600
    const app = provider(socketPath, { hostCommand: recording.command, connectTimeoutMs })
    const started = Date.now()
    const error = await app.listProcesses().then(
      () => null,
      (failed: unknown) => failed as { code?: unknown; message?: unknown },
    )
    const afterMs = Date.now() - started
    expect(error).toMatchObject({ code: 'unauthorized' })
    expect(String(error!.message)).toContain(`${socketPath}.secret`)
    expect(afterMs).toBeGreaterThanOrEqual(connectTimeoutMs)
    expect(recording.started()).toBe(false)
  }, 30_000)

  it('a reconnect after a drop whose secret is refused does not hold the app open: an app with nothing else to do ends on its own', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const connectTimeoutMs = 20_000
    const { code, printed } = await runAppToEnd(cleanups, 'app-reconnect-refused.ts', [socketPath, String(connectTimeoutMs)])
    expect(code).toBe(0)
    const result = JSON.parse(printed.trim()) as { refusals: number; exitAfterRefusalMs: number | null }
    // The reconnect was refused, and the app ended without polling on until connectTimeoutMs.
    expect(result.refusals).toBeGreaterThanOrEqual(1)
    expect(result.exitAfterRefusalMs).not.toBeNull()
    expect(result.exitAfterRefusalMs!).toBeLessThan(connectTimeoutMs / 4)
  }, 40_000)

  it('a call that joins a background reconnect holds the app until it settles, even when it joins inside the poll’s pause', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const connectTimeoutMs = 1_500
    const { code, printed } = await runAppToEnd(cleanups, 'app-reconnect-refused.ts', [socketPath, String(connectTimeoutMs), 'join'])
    expect(code).toBe(0)
    const result = JSON.parse(printed.trim()) as { refusals: number; exitAfterRefusalMs: number | null; joined: string | null }
    // The listing waited for the poll (refused until its deadline), instead of the app ending under it.
    expect(result.joined).toBe('unauthorized')
    expect(result.exitAfterRefusalMs!).toBeGreaterThanOrEqual(connectTimeoutMs - 100)
  }, 30_000)

  it('without a host listening, a call that starts none fails host_unavailable at once (no poll until connectTimeoutMs)', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    await deadHostLeftovers(socketPath)
    const recording = recordingHostCommand(dir)
    const connectTimeoutMs = 5_000
    const listing = provider(socketPath, { hostCommand: recording.command, connectTimeoutMs })
    const noStart = provider(socketPath, { autoStart: false, hostCommand: recording.command, connectTimeoutMs })
    const started = Date.now()
    await expect(listing.listProcesses()).rejects.toMatchObject({ code: 'host_unavailable' })
    await expect(noStart.spawn({ file: 'cat' })).rejects.toMatchObject({ code: 'host_unavailable' })
    expect(Date.now() - started).toBeLessThan(connectTimeoutMs / 2)
    expect(recording.started()).toBe(false)
  }, 30_000)
})
