/**
 * A host exits once it has had no session and no client for `idleExitMs`. An app's hello that
 * arrives as the host decides to exit must end served — by that host, or, when it is gone, by
 * another the app starts (autostart) — never hanging, never with a spawn accepted by a host that
 * then exits with the PTY.
 */
import { startPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it, vi } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { connectGate } from './connect-gate.js'
import { hostPid, isAlive, killHostAndClean, makeSocketDir, providerDisposedAfter, providerOn, useCleanups } from './pty-host-test-support.js'

vi.mock('node:net', async (importOriginal) => (await import('./connect-gate.js')).gatedNet(await importOriginal()))

const cleanups = useCleanups()

const provider = (socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): PtyHostProvider => providerDisposedAfter(cleanups, socketPath, extra)

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('pty host: a hello that arrives as the idle host exits', () => {
  it('the app connects while the host’s idle exit fires: it sees that host gone at once and is served by the one it starts', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const idleExitMs = 50
    let closedAt: number | null = null
    // The idle host, in this process: its idle timer and the app's connection share one event loop.
    const idle = await startPtyHost({ socketPath, idleExitMs, onClosed: () => (closedAt = Date.now()) })
    cleanups.push(() => idle.close())
    const app = provider(socketPath, { connectTimeoutMs: 8_000 })
    // The spawn's connect goes out in this very turn (checks, secret, connect(2) are synchronous):
    // the connection waits in the host's listen backlog.
    const connectedAt = Date.now()
    const spawning = app.spawn({ file: 'cat' }).then(
      (result) => ({ ok: true as const, id: result.id, pid: result.pid }),
      (error: unknown) => ({ ok: false as const, code: (error as { code?: unknown }).code, message: String(error) }),
    )
    // Then the loop is held past the idle deadline: when it runs again, the idle timer fires
    // (timers run before the poll that would accept the connection) — the host decides to exit
    // with the hello on its doorstep.
    const until = Date.now() + idleExitMs + 30
    while (Date.now() < until) {
      // Spin.
    }
    const outcome = await spawning
    expect(outcome).toEqual({ ok: true, id: expect.any(String), pid: expect.any(Number) })
    // Never a hang: a hello left unanswered would have waited out connectTimeoutMs before the app
    // tried anything else.
    expect(Date.now() - connectedAt).toBeLessThan(8_000)
    // The idle host did exit, and another (started by the app) holds the PTY.
    expect(closedAt).not.toBeNull()
    expect(closedAt! - connectedAt).toBeGreaterThanOrEqual(idleExitMs)
    const serving = hostPid(socketPath)
    expect(serving).not.toBeNull()
    expect(serving).not.toBe(process.pid)
    // The PTY lives on: the host that accepted it keeps it past any idle deadline.
    await sleep(idleExitMs * 4)
    expect(isAlive(serving!)).toBe(true)
    expect(isAlive((outcome as { pid: number }).pid)).toBe(true)
    expect((await app.listProcesses()).map((row) => row.id)).toEqual([(outcome as { id: string }).id])
  }, 30_000)

  it('the host the app started exits idle before the app’s hello reaches it: the app starts another, and the PTY lives', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => {
      connectGate.hold = null
      await killHostAndClean(socketPath, dir)
    })
    const idleExitMs = 200
    // The app's first connect to the host it started (it has found the socket and read the
    // secret) goes out only once that host has gone idle and exited: an app busy for longer than
    // the host's idle time, or a hello that lost the race to the idle timer.
    let firstHostPid: number | null = null
    let held = 0
    connectGate.hold = (path) => {
      if (path !== socketPath || held > 0) return null
      held += 1
      firstHostPid = hostPid(socketPath)
      return waitFor(() => (firstHostPid !== null && isDead(firstHostPid) ? true : undefined), 'the started host to exit idle', 10_000)
    }
    const app = provider(socketPath, { idleExitMs, connectTimeoutMs: 8_000 })
    const started = Date.now()
    const outcome = await app.spawn({ file: 'cat' }).then(
      (result) => ({ ok: true as const, id: result.id, pid: result.pid }),
      (error: unknown) => ({ ok: false as const, code: (error as { code?: unknown }).code, afterMs: Date.now() - started, message: String(error) }),
    )
    expect(held).toBe(1)
    expect(firstHostPid).not.toBeNull()
    expect(outcome).toEqual({ ok: true, id: expect.any(String), pid: expect.any(Number) })
    const serving = hostPid(socketPath)!
    expect(serving).not.toBe(firstHostPid)
    // The host holding the PTY does not exit idle under it.
    await sleep(idleExitMs * 3)
    expect(isAlive(serving)).toBe(true)
    expect(isAlive((outcome as { pid: number }).pid)).toBe(true)
    expect((await app.listProcesses()).map((row) => row.id)).toEqual([(outcome as { id: string }).id])
  }, 30_000)
})
