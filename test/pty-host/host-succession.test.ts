/**
 * The pty host across a host's death and a reconnect — found by a bug hunt (3 Dec): a failed
 * re-attach of a predecessor's PTY made the successor's "no such session" count as proof of its
 * absence (`probeLiveness` false, a stop "verified" while the process ran); a session id reused on
 * the successor kept the old session's count, so the new one's loss went unreported; a pause the
 * app held was lost when the connection closed.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, isAlive, killHost, killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

function provider(socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): PtyHostProvider {
  const made = providerOn(socketPath, extra)
  cleanups.push(() => made.detach())
  return made
}

/**
 * A host from the sources (started by the app), SIGKILLed once the app's PTY outlives it; then a
 * successor in this process. An app with `reconnectAttempts: 0` is connected to it explicitly (a
 * listing connects), as it must be after every later drop.
 */
async function predecessorPtyAndSuccessor(successorOptions: Parameters<typeof startPtyHost>[0] = {}, appOptions: Parameters<typeof providerOn>[1] = {}) {
  const { dir, socketPath } = makeSocketDir()
  cleanups.push(() => killHostAndClean(socketPath, dir))
  const app = provider(socketPath, appOptions)
  let output = ''
  app.onData(({ data }) => (output += data))
  // A process that outlives its host (it ignores the hang-up of its terminal), after 3000 chars of output.
  const spawned = await app.spawn({
    sessionId: 'slot-1',
    file: '/bin/sh',
    args: ['-c', "trap '' HUP; i=0; while [ $i -lt 100 ]; do printf '%028d\\n' $i; i=$((i+1)); done; echo trapped; while :; do sleep 0.1; done"],
  })
  await waitFor(() => (output.includes('trapped') ? true : undefined), 'the predecessor PTY output')
  cleanups.push(async () => {
    try {
      process.kill(spawned.pid!, 'SIGKILL')
    } catch {
      // Gone.
    }
  })
  await killHost(socketPath)
  await waitFor(() => (app.connected ? undefined : true), 'the drop')
  const successor = await startPtyHost({ socketPath, idleExitMs: 60_000, ...successorOptions })
  cleanups.push(() => successor.close())
  if (appOptions.reconnectAttempts === 0) await app.listProcesses()
  await waitFor(() => (app.connected ? true : undefined), 'the reconnect to the successor', 10_000)
  return { app, dir, socketPath, successor, spawned, outputSoFar: () => output }
}

describe('pty host: a predecessor’s PTY after a failed attach on the successor', () => {
  // docs/pty-host.md ("The host dies"): the successor read the dead host's session journal, so it
  // answers for the predecessor's PTY (`true` while its process runs); its listings still cannot
  // speak for it, and a failed re-attach (the successor never held the session) changes neither.
  it('keeps probeLiveness true (from the journal) and listings non-authoritative after the app tries to re-attach it (pty_absent)', async () => {
    const { app, spawned } = await predecessorPtyAndSuccessor()
    expect(isAlive(spawned.pid!)).toBe(true)
    expect(await app.probeLiveness(spawned.id)).toBe(true)
    expect(app.authoritativeListings).toBe(false)
    // A slot re-attach (what the controller sends for a known session) — the successor never held it.
    await expect(app.spawn({ sessionId: spawned.id, attachOnly: true })).rejects.toMatchObject({ code: 'pty_absent' })
    expect(isAlive(spawned.pid!)).toBe(true)
    expect(await app.probeLiveness(spawned.id)).toBe(true)
    expect(app.authoritativeListings).toBe(false)
  }, 40_000)
})

describe('pty host: a session id reused on a successor host', () => {
  // docs/pty-host.md: "Loss is reported, never silent. When the asked sequence fell out of the
  // ring, the provider emits onOutputLoss({ id, fromSeq, toSeq, incarnationId }) before the replay".
  it('reports the gap of the new session’s reconnect replay (no silent gap because the old session had delivered more)', async () => {
    // The app reconnects only when told (a listing connects): the burst below must be on the host,
    // and out of its ring, before the app is back — with automatic reconnects (50 ms after the
    // drop) a loaded machine let it return first and get the burst live.
    const { app, dir, socketPath, successor } = await predecessorPtyAndSuccessor({ historyChars: 64 }, { reconnectAttempts: 0 })
    const flag = join(dir, 'go')
    let output = ''
    app.onData(({ id, data }) => {
      if (id === 'slot-1') output += data
    })
    const losses: { fromSeq: number; toSeq: number }[] = []
    app.onOutputLoss(({ fromSeq, toSeq }) => losses.push({ fromSeq, toSeq }))
    // The slot gets a new session on the successor, under the same session id.
    const fresh = await app.spawn({
      sessionId: 'slot-1',
      isNewSession: true,
      file: '/bin/sh',
      args: ['-c', `echo first-XYZ; while [ ! -e '${flag}' ]; do sleep 0.05; done; i=0; while [ $i -lt 40 ]; do echo line-$i; i=$((i+1)); done; echo last-XYZ; exec cat`],
    })
    expect(fresh.providerSequence).toEqual({ value: 0, generation: 'reset' })
    await waitFor(() => (output.includes('first-XYZ') ? true : undefined), 'the first line')
    const deliveredBeforeDrop = output.length
    successor.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    writeFileSync(flag, '')
    const other = provider(socketPath, { autoStart: false })
    await other.listProcesses()
    await waitFor(async () => ((await other.getBufferSnapshot('slot-1'))?.data.includes('last-XYZ') ? true : undefined), 'the last line on the host')
    expect(app.connected).toBe(false)
    await app.listProcesses()
    await waitFor(() => (output.includes('last-XYZ') ? true : undefined), 'the reconnect replay', 10_000)
    // The app did not get the start of the burst (it fell out of the ring) ...
    expect(output).not.toContain('line-0\r\n')
    // The ring kept only 64 chars: everything between the drop and those was lost, and said so.
    expect(losses).toHaveLength(1)
    expect(losses[0]!.fromSeq).toBe(deliveredBeforeDrop)
    expect(losses[0]!.toSeq - losses[0]!.fromSeq + output.length).toBe((await other.getBufferSnapshot('slot-1'))!.seq)
    await app.shutdown('slot-1', { immediate: true })
  }, 40_000)
})

describe('pty host: an app-held pause across a reconnect', () => {
  // docs/pty-host.md (Flow control): "A session's PTY is paused ... while anything wants it paused ...:
  // the app's controller paused it (pauseProducer → pause, until resumeProducer → resume)".
  it('keeps the PTY paused after the provider reconnects while the app still holds its pause', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false })
    let ticks = 0
    app.onData(({ data }) => (ticks += data.split('tick').length - 1))
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', 'while :; do echo tick; sleep 0.02; done'] })
    await waitFor(() => (ticks > 5 ? true : undefined), 'some ticks')
    app.pauseProducer(id)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const pausedTicks = ticks
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(ticks).toBe(pausedTicks)
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    await waitFor(() => (app.connected && app.hasPty(id) === true ? true : undefined), 'the reconnect and re-attach', 10_000)
    // Whatever the drop let through has arrived by now; the app still holds its pause.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const afterReconnect = ticks
    // Unpaused, it would tick every 20 ms (and first flush what its tty held): ~25 ticks in 500 ms.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(ticks - afterReconnect).toBe(0)
    app.resumeProducer(id)
    await app.shutdown(id, { immediate: true })
  }, 30_000)

  // A review (3 Dec): the pause is the incarnation's the app paused, not the id's.
  const TICKER = { file: '/bin/sh', args: ['-c', 'while :; do echo tick; sleep 0.02; done'] }
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

  it('an attach that finds a new incarnation under the id does not pause it on the app’s behalf', async () => {
    const { host, socketPath } = await inProcessHost(cleanups)
    const app = provider(socketPath, { autoStart: false, reconnectAttempts: 0 })
    let ticks = 0
    app.onData(({ data }) => (ticks += data.split('tick').length - 1))
    const first = await app.spawn({ ...TICKER, sessionId: 'x' })
    await waitFor(() => (ticks > 3 ? true : undefined), 'ticks')
    // Held for the first incarnation.
    app.pauseProducer('x')
    host.dropConnections()
    await waitFor(() => (app.connected ? undefined : true), 'the drop')
    // Meanwhile another app replaces the session: incarnation 2 under the same id.
    const other = provider(socketPath, { autoStart: false })
    await other.shutdown('x', { immediate: true })
    const second = await other.spawn({ ...TICKER, sessionId: 'x', isNewSession: true })
    expect(second.incarnationId).not.toBe(first.incarnationId)
    // The app attaches to whatever now runs under the id (it never paused incarnation 2).
    const attached = await app.attach('x')
    expect(attached.incarnationId).toBe(second.incarnationId)
    await sleep(300)
    const before = ticks
    // Unpaused, it ticks every 20 ms: ten new ticks come within a fraction of a second (paused, never).
    await waitFor(() => (ticks - before > 10 ? true : undefined), 'ten ticks of the unpaused incarnation', 10_000)
    await other.shutdown('x', { immediate: true })
  }, 30_000)
})
