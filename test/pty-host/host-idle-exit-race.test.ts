/**
 * A host exits once it has had no session and no client for `idleExitMs`. An app's hello that
 * arrives as the host decides to exit must end served — by that host, or, when it is gone, by
 * another the app starts (autostart) — never hanging, never with a spawn accepted by a host that
 * then exits with the PTY. And a host process the app started waits for its first client before
 * any idle exit (`PTY_HOST_FIRST_CLIENT_GRACE_MS`), however small `idleExitMs`: the app's hello is
 * not raced by it, and the app does not start host after host.
 */
import { PTY_HOST_FIRST_CLIENT_GRACE_MS, startPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it, vi } from 'vitest'
import { rmSync, writeFileSync } from 'node:fs'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { connectGate } from './connect-gate.js'
import { hostPid, isAlive, killHostAndClean, makeSocketDir, providerDisposedAfter, providerOn, rawClient, useCleanups } from './pty-host-test-support.js'

vi.mock('node:net', async (importOriginal) => (await import('./connect-gate.js')).gatedNet(await importOriginal()))

const cleanups = useCleanups()

const provider = (socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): PtyHostProvider => providerDisposedAfter(cleanups, socketPath, extra)

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Hold the app's first connect to `socketPath` (the host it started is listening then) until
 * `release(firstHostPid)` settles; later connects go through. Cleaned up with the test's socket dir.
 */
function holdFirstConnect(socketPath: string, dir: string, release: (firstHostPid: number | null) => Promise<unknown>): { held(): number; firstHostPid(): number | null } {
  cleanups.push(async () => {
    connectGate.hold = null
    await killHostAndClean(socketPath, dir)
  })
  let firstHostPid: number | null = null
  let held = 0
  connectGate.hold = (path) => {
    if (path !== socketPath || held > 0) return null
    held += 1
    firstHostPid = hostPid(socketPath)
    return release(firstHostPid)
  }
  return { held: () => held, firstHostPid: () => firstHostPid }
}

/** The app's spawn of `cat`, as its outcome. */
function spawnOutcome(app: PtyHostProvider): Promise<{ ok: true; id: string; pid: number | null | undefined } | { ok: false; code: unknown; message: string }> {
  return app.spawn({ file: 'cat' }).then(
    (result) => ({ ok: true as const, id: result.id, pid: result.pid }),
    (error: unknown) => ({ ok: false as const, code: (error as { code?: unknown }).code, message: String(error) }),
  )
}

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
    const idleExitMs = 200
    // The app's first connect to the host it started (it has found the socket and read the
    // secret) goes out only once that host has gone idle and exited: an app busy for longer than
    // the host's idle time and its first-client grace (PTY_HOST_FIRST_CLIENT_GRACE_MS).
    const gate = holdFirstConnect(socketPath, dir, (firstHostPid) =>
      waitFor(() => (firstHostPid !== null && isDead(firstHostPid) ? true : undefined), 'the started host to exit idle', 10_000),
    )
    const app = provider(socketPath, { idleExitMs, connectTimeoutMs: 8_000 })
    const outcome = await spawnOutcome(app)
    expect(gate.held()).toBe(1)
    expect(gate.firstHostPid()).not.toBeNull()
    expect(outcome).toEqual({ ok: true, id: expect.any(String), pid: expect.any(Number) })
    const serving = hostPid(socketPath)!
    expect(serving).not.toBe(gate.firstHostPid())
    // The host holding the PTY does not exit idle under it.
    await sleep(idleExitMs * 3)
    expect(isAlive(serving)).toBe(true)
    expect(isAlive((outcome as { pid: number }).pid)).toBe(true)
    expect((await app.listProcesses()).map((row) => row.id)).toEqual([(outcome as { id: string }).id])
  }, 30_000)

  it('the host the app started, with a tiny idleExitMs, waits for the app’s first hello: held past idleExitMs, the app is served by that very host', async () => {
    const { dir, socketPath } = makeSocketDir()
    const idleExitMs = 20
    // The app's first connect to the host it started goes out only after many times idleExitMs
    // (well within the grace: a hello that late is expected to be served): an app busy for a
    // moment after its host started listening.
    const holdMs = Math.min(600, PTY_HOST_FIRST_CLIENT_GRACE_MS / 2)
    const gate = holdFirstConnect(socketPath, dir, () => sleep(holdMs))
    const app = provider(socketPath, { idleExitMs, connectTimeoutMs: 8_000 })
    const outcome = await spawnOutcome(app)
    expect(gate.held()).toBe(1)
    expect(gate.firstHostPid()).not.toBeNull()
    expect(outcome).toEqual({ ok: true, id: expect.any(String), pid: expect.any(Number) })
    // Served by the host it started first: that one did not exit idle under the held hello, and
    // no second host was started.
    expect(hostPid(socketPath)).toBe(gate.firstHostPid())
    expect(isAlive(gate.firstHostPid()!)).toBe(true)
    expect((await app.listProcesses()).map((row) => row.id)).toEqual([(outcome as { id: string }).id])
  }, 30_000)
})

describe('pty host: the first-client grace (firstClientGraceMs)', () => {
  it('a host no client has come to exits idle no earlier than the grace, however small idleExitMs — a client refused at its hello does not end the grace', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const firstClientGraceMs = 800
    let closedAt: number | null = null
    const startedAt = Date.now()
    const host = await startPtyHost({ socketPath, idleExitMs: 10, firstClientGraceMs, onClosed: () => (closedAt = Date.now()) })
    cleanups.push(() => host.close())
    await sleep(200)
    expect(closedAt).toBeNull()
    // A connection refused at its hello (a stale secret) comes and goes: still no client.
    writeFileSync(`${socketPath}.secret`, `${'0'.repeat(64)}\n`, { mode: 0o600 })
    await expect(rawClient(socketPath)).rejects.toThrow(/refused the hello/)
    await sleep(200)
    expect(closedAt).toBeNull()
    await waitFor(() => (closedAt !== null ? true : undefined), 'the host to exit idle once the grace is over', 10_000)
    expect(closedAt! - startedAt).toBeGreaterThanOrEqual(firstClientGraceMs)
  })

  it('once a client has come and gone, idleExitMs alone counts again (the grace is over)', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    let closedAt: number | null = null
    // A grace far longer than the test: only the client's visit can end it.
    const host = await startPtyHost({ socketPath, idleExitMs: 50, firstClientGraceMs: 60_000, onClosed: () => (closedAt = Date.now()) })
    cleanups.push(() => host.close())
    const client = await rawClient(socketPath)
    const leftAt = Date.now()
    client.close()
    await waitFor(() => (closedAt !== null ? true : undefined), 'the host to exit idle after its client left', 10_000)
    expect(closedAt! - leftAt).toBeGreaterThanOrEqual(40)
  })

  it('refuses a firstClientGraceMs that is not a non-negative integer', async () => {
    const { dir, socketPath } = makeSocketDir()
    const starting = startPtyHost({ socketPath, firstClientGraceMs: -1 })
    // Should it start after all, it is closed (never SIGKILLed: it would be this process).
    cleanups.push(async () => {
      await (await starting.catch(() => null))?.close()
      rmSync(dir, { recursive: true, force: true })
    })
    await expect(starting).rejects.toMatchObject({ code: 'invalid_option' })
  })
})
