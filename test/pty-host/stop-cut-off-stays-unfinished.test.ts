/**
 * A stop whose outcome the app never learnt — its request timed out, the connection dropped, the
 * host died — leaves the PTY's stop unfinished in the app (h247). The PTY below: its leader dies of
 * the hang-up at once, its background job ignores HUP and TERM and dies only of the host's KILL,
 * which comes once the graces have passed. The leader's exit reaches the app first; then the stop's
 * request is cut off. Until 8 Dec only the host's own answers (`shutdown_timeout`,
 * `shutdown_failed`) marked a stop unfinished: once nothing was in flight, a later `shutdown` of the
 * ended PTY resolved at once — "stopped" — while the job lived, and a controller's `stopAndWait`,
 * finding the PTY unlisted (the host lists no ended session), answered `true`. Now such a
 * `shutdown` goes to the host (after a reconnect), which joins or runs again the stop it keeps
 * unfinished, or rejects when no host answers — or when the host that ran the stop died and a
 * successor, which never held the session, is connected. `dispose()` stops such a PTY too (it
 * skipped it once no stop of it was in flight).
 *
 * And a stop in flight when the host died rejected `transport_lost` with no `ptyId` (h246's
 * finding): now it names the method and the PTY, as every refusal of a call about a PTY does.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { isPtyHostError, type PtyHostProvider } from 'ptykit/pty-host'
import type { PtyExitEvent } from 'ptykit/contracts'
import { isRequestTimeout } from '../../src/pty-host/pty-host-connection.js'
import { hangupProofJob, isDead, jobSurvivingHangup, killIfStill, waitFor } from '../node-pty/pty-test-support.js'
import { hostFixture, hostPid, inProcessHost, killHost, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** The leader dies of the hang-up; its job ignores HUP and TERM (it dies of a KILL only). */
const JOB_SURVIVES_HANGUP = jobSurvivingHangup(60)

/** Graces of an in-process host: the job lives ~4 s into a stop, the window the tests cut it off in. */
const WIDE_GRACES = { hangupGraceMs: 2_000, terminateGraceMs: 2_000 }

/** Spawn {@link JOB_SURVIVES_HANGUP} on `provider`; its id, the job's pid, and a promise of the leader's exit. */
async function spawnWithJob(provider: PtyHostProvider): Promise<{ id: string; job: number; leaderExited: Promise<PtyExitEvent> }> {
  let output = ''
  let exited: (event: PtyExitEvent) => void = () => undefined
  const leaderExited = new Promise<PtyExitEvent>((resolve) => (exited = resolve))
  const { id } = await provider.spawn(JOB_SURVIVES_HANGUP)
  provider.onData((event) => event.id === id && (output += event.data))
  provider.onExit((event) => event.id === id && exited(event))
  const job = await hangupProofJob(() => output, (identity) => cleanups.push(async () => killIfStill(identity)))
  return { id, job, leaderExited }
}

/** A call's outcome as data, and whether the job was dead when it settled. */
async function settled(call: Promise<unknown>, job: number): Promise<{ outcome: string; ptyId?: string | undefined; jobDead: boolean }> {
  try {
    await call
    return { outcome: 'resolved', jobDead: isDead(job) }
  } catch (error) {
    if (!isPtyHostError(error)) return { outcome: `untyped ${String(error)}`, jobDead: isDead(job) }
    return { outcome: `${error.code} ${/`(\w+)`/.exec(error.message)?.[1]}`, ptyId: error.ptyId, jobDead: isDead(job) }
  }
}

/**
 * A provider on a host of its own, a stop of {@link JOB_SURVIVES_HANGUP} sent, the leader's exit in,
 * then the host SIGKILLed under the stop: the provider, the PTY, its job and the stop's outcome.
 */
async function stopCutOffByHostDeath(): Promise<{ app: PtyHostProvider; id: string; job: number; first: ReturnType<typeof settled> }> {
  const { socketPath } = hostFixture(cleanups)
  const app = providerOn(socketPath)
  cleanups.push(() => app.dispose())
  const { id, job, leaderExited } = await spawnWithJob(app)
  const first = settled(app.shutdown(id, { timeoutMs: 20_000 }), job)
  await leaderExited
  await killHost(socketPath)
  return { app, id, job, first }
}

describe('a stop the app never heard the end of leaves the PTY’s stop unfinished', () => {
  it('cut off by a drop: a later shutdown of the ended PTY reconnects and gets the host’s answer, not resolved at once', async () => {
    const { host, socketPath } = await inProcessHost(cleanups, { nodePty: WIDE_GRACES })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const { id, job, leaderExited } = await spawnWithJob(app)
    const first = settled(app.shutdown(id, { timeoutMs: 20_000 }), job)
    await leaderExited
    host.dropConnections()
    // The drop cut the stop off: refused naming the method and the PTY, the job still running.
    expect(await first).toEqual({ outcome: 'transport_lost shutdown', ptyId: id, jobDead: false })
    // Before: resolved at once, nothing sent, the job alive (the host's KILL ~4 s away).
    expect(await settled(app.shutdown(id, { immediate: true, timeoutMs: 10_000 }), job)).toEqual({ outcome: 'resolved', jobDead: true })
  }, 30_000)

  it('cut off by a drop: the dispose stops the ended PTY again, and resolves only once its job is dead', async () => {
    const { host, socketPath } = await inProcessHost(cleanups, { nodePty: WIDE_GRACES })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const { id, job, leaderExited } = await spawnWithJob(app)
    const first = settled(app.shutdown(id, { timeoutMs: 20_000 }), job)
    await leaderExited
    host.dropConnections()
    expect(await first).toMatchObject({ outcome: 'transport_lost shutdown', jobDead: false })
    // Before: the dispose skipped the ended PTY (no stop of it in flight any more) and resolved
    // while the job ran on (the host's KILL of it ~4 s away).
    expect(await settled(app.dispose(), job)).toEqual({ outcome: 'resolved', jobDead: true })
  }, 30_000)

  it('cut off by the request timeout (the host frozen): a later shutdown is sent, and rejects while the host cannot answer', async () => {
    const { socketPath } = hostFixture(cleanups)
    const app = providerOn(socketPath, { requestTimeoutMs: 300 })
    cleanups.push(() => app.dispose())
    const { id, job, leaderExited } = await spawnWithJob(app)
    const host = hostPid(socketPath)!
    // The host's KILL of the job comes ~1 s into its stop (its default graces): it is frozen first.
    const first = app.shutdown(id, { timeoutMs: 1_000 }).then(
      () => 'resolved',
      (error: unknown) => error,
    )
    await leaderExited
    process.kill(host, 'SIGSTOP')
    let second: Awaited<ReturnType<typeof settled>>
    try {
      const cut = await first
      expect(isRequestTimeout(cut)).toBe(true)
      expect(cut).toMatchObject({ code: 'transport_lost', ptyId: id })
      // Before: resolved at once (nothing sent) with the job alive.
      second = await settled(app.shutdown(id, { immediate: true, timeoutMs: 200 }), job)
    } finally {
      process.kill(host, 'SIGCONT')
    }
    expect(second).toEqual({ outcome: 'transport_lost shutdown', ptyId: id, jobDead: false })
    // The host back: its stop (kept unfinished there) is joined and completes.
    expect(await settled(app.shutdown(id, { immediate: true, timeoutMs: 10_000 }), job)).toEqual({ outcome: 'resolved', jobDead: true })
  }, 30_000)

  it('cut off by the host’s death: the stop in flight names the PTY, and a later shutdown rejects (no host), not resolved', async () => {
    const { app, id, job, first } = await stopCutOffByHostDeath()
    // Before: `transport_lost` with no `ptyId` (h246).
    expect(await first).toEqual({ outcome: 'transport_lost shutdown', ptyId: id, jobDead: false })
    // The job outlived its host (it ignores the hang-up of the master's close); nobody can stop it
    // through this provider now, and a shutdown says so. Before: resolved at once.
    expect(await settled(app.shutdown(id, { immediate: true }), job)).toEqual({ outcome: 'host_unavailable shutdown', ptyId: id, jobDead: false })
  }, 30_000)

  it('cut off by the host’s death, a successor connected: a later shutdown is refused, not answered by a host that never held the PTY', async () => {
    const { app, id, job, first } = await stopCutOffByHostDeath()
    expect(await first).toMatchObject({ outcome: 'transport_lost shutdown', jobDead: false })
    // A new host (this app's next spawn starts one): the app is connected to it.
    const other = await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 60'] })
    cleanups.push(() => app.shutdown(other.id, { immediate: true }).catch(() => undefined))
    // Before: sent to the successor, which held no such session and answered — resolved, the job alive.
    expect(await settled(app.shutdown(id, { immediate: true, timeoutMs: 5_000 }), job)).toEqual({ outcome: 'host_unavailable shutdown', ptyId: id, jobDead: false })
  }, 30_000)

  it('a controller’s stopAndWait after a stop the drop cut off: true only once the job is dead', async () => {
    const { host, socketPath } = await inProcessHost(cleanups, { nodePty: WIDE_GRACES })
    const provider = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => provider.dispose())
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose())
    controller.on('error', () => undefined) // the cut-off stop is reported there
    let output = ''
    controller.on('data', ({ data }) => (output += data))
    const { id } = await controller.spawn(JOB_SURVIVES_HANGUP)
    const leaderExited = new Promise<void>((resolve) => controller.on('exit', (event) => event.ptyId === id && resolve()))
    const job = await hangupProofJob(() => output, (identity) => cleanups.push(async () => killIfStill(identity)))
    // A stopAndWait given up once the leader died: its stop still runs on the host, until a drop cuts it off.
    const abort = new AbortController()
    const first = controller.stopAndWait(id, { timeoutMs: 20_000, signal: abort.signal })
    await leaderExited
    abort.abort()
    expect(await first).toBe(false)
    host.dropConnections()
    await waitFor(() => (provider.connected ? undefined : true), 'the app to see its connection dropped')
    // Before: `true` at once (the provider's shutdown resolved without asking, the listing omits
    // the ended PTY) while the job lived — the host's KILL of it ~4 s away.
    const verdict = await controller.stopAndWait(id, { timeoutMs: 10_000 })
    expect({ verdict, jobDead: isDead(job) }).toEqual({ verdict: true, jobDead: true })
  }, 30_000)
})
