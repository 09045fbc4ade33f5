// A host app's late calls to SSH PTYs whose connections dropped (the server killed: every
// connection lost at once), over several connections (`MaxSessions 10`): while the link is down,
// right after the server is back (the provider reconnecting), and from inside the exit listeners
// of the PTYs the reconnect proves gone. A dropped link is never an exit; a stop asked for while
// it is down says it was not carried out (`false`, `unknown/stop_unverified`), and is carried out
// once the server is back (the death then confirmed by a second exit); a program the hang-up ended
// is proven gone once a connection is back (`unknown/cause_unreported`); one that outlived it is
// stopped for real (`true`, `operator_close`). Nothing throws or rejects unhandled, and nothing of
// the PTYs is left on the server, before any dispose.
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { waitFor } from '../node-pty/pty-test-support.js'
import { loopbackProvider } from './loopback-provider.js'
import { isAlive, taggedProcesses } from './ssh-test-support.js'

/** PTYs: half ignore the hang-up (they outlive the link), half die of it. */
const PTYS = 24

const TAG = `calls-link-down-${process.pid}`

describe('SSH PTYs called while their link is down and reconnecting', () => {
  it(`${PTYS} PTYs over several connections: every answer true while down, after the server is back, and from their exit listeners`, async () => {
    const loopback = await loopbackProvider(TAG, { sshd: { maxSessions: 10 } })
    const { server, provider } = loopback
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(`${error.code}: ${error.message}`))
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const exits: PtyControllerExitEvent[] = []
    try {
      const programs = (index: number): string[] => ['-c', index % 2 === 0 ? "trap '' HUP; exec sleep 600" : 'exec sleep 600']
      const replies = await Promise.all(
        Array.from({ length: PTYS }, (_, index) => controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: programs(index), env: { PTYKIT_SWEEP_TAG: TAG } })),
      )
      expect(server.connections()).toBeGreaterThanOrEqual(3)
      const hupProof = replies.filter((_, index) => index % 2 === 0)
      const hungUp = replies.filter((_, index) => index % 2 === 1)
      const insideExit: unknown[] = []
      const pending: Promise<unknown>[] = []
      controller.on('exit', (event) => {
        exits.push(event)
        const { ptyId } = event
        // The calls from inside a PTY's first exit listener (a second one confirms a death whose stop stood unverified).
        if (exits.filter((exit) => exit.ptyId === ptyId).length > 1) return
        const exit = event.cause.kind === 'unknown' ? event.cause.reason : event.cause.kind
        // Called from inside the exit listener.
        insideExit.push({ exit, write: controller.write(ptyId, 'x', 'driving'), kill: controller.kill(ptyId), resize: controller.resize(ptyId, 50, 10), hasPty: controller.hasPty(ptyId) })
        controller.acknowledgeData(ptyId, 3)
        pending.push(Promise.resolve(controller.writeWithSettlement(ptyId, 'x', 'driving')).then((settlement) => insideExit.push({ exit, settlement })))
        pending.push(controller.getCwd(ptyId).then((cwd) => insideExit.push({ exit, cwd })))
        pending.push(controller.probePtyLiveness(ptyId).then((alive) => insideExit.push({ exit, alive })))
      })
      await loopback.waitForSleeps(PTYS, 'every program to run past its trap')

      await server.killAll()
      await waitFor(() => (replies.every(({ id }) => provider.hasPty(id) === null) ? true : undefined), 'every PTY to become unverifiable')
      // While the link is down: nothing can be sent, nothing is known, nothing is claimed.
      for (const { id } of replies) {
        expect([controller.write(id, 'x', 'driving'), controller.resize(id, 50, 10)]).toEqual([false, false])
        expect(await controller.writeWithSettlement(id, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
        expect(await controller.getCwd(id)).toBeNull()
        expect(await controller.getForegroundProcess(id)).toBeNull()
        expect(await controller.probePtyLiveness(id)).toBeNull()
        controller.acknowledgeData(id, 3)
      }
      expect((await controller.listProcessesWithHostScope()).hostIds).toEqual([])
      // A stop asked for now cannot reach the program: said so, never a false exit.
      const killedWhileDown = hupProof.slice(0, 3)
      const stoppedWhileDown = hupProof.slice(3, 6)
      const stoppedLater = hupProof.slice(6)
      expect(killedWhileDown.map(({ id }) => controller.kill(id))).toEqual([true, true, true])
      expect(await Promise.all(stoppedWhileDown.map(({ id }) => controller.stopAndWait(id)))).toEqual([false, false, false])
      await sleep(1_000) // the background reconnects fail meanwhile
      expect(exits.map((exit) => exit.cause)).toEqual(Array(6).fill({ kind: 'unknown', reason: 'stop_unverified' }))
      expect([...killedWhileDown, ...stoppedWhileDown].every(({ pid }) => isAlive(pid!))).toBe(true)

      // The server is back: stops asked for right away (the provider reconnecting) are carried out;
      // the ones the hang-up ended are proven gone; the stops asked for while it was down are carried out too.
      await server.restart()
      const verdicts = Promise.all(stoppedLater.map(({ id }) => controller.stopAndWait(id, { timeoutMs: 20_000 })))
      await waitFor(() => (exits.length === PTYS + 6 ? true : undefined), 'every exit, and the confirmed deaths of the six stopped while down', 30_000)
      expect(await verdicts).toEqual(Array(stoppedLater.length).fill(true))
      await Promise.all(pending)
      await waitFor(() => (taggedProcesses(TAG).length === 0 ? true : undefined), 'every program to be gone, before any dispose', 20_000)

      const causeOf = (id: string): unknown => exits.find((exit) => exit.ptyId === id)?.cause
      expect(hungUp.map(({ id }) => causeOf(id))).toEqual(Array(hungUp.length).fill({ kind: 'unknown', reason: 'cause_unreported' }))
      expect(stoppedLater.map(({ id }) => causeOf(id))).toEqual(Array(stoppedLater.length).fill({ kind: 'operator_close' }))
      // Stopped while the link was down: unverified then, their death confirmed once the stop was carried out.
      const causesOf = (id: string): unknown[] => exits.filter((exit) => exit.ptyId === id).map((exit) => exit.cause)
      expect([...killedWhileDown, ...stoppedWhileDown].map(({ id }) => causesOf(id))).toEqual(Array(6).fill([{ kind: 'unknown', reason: 'stop_unverified' }, { kind: 'operator_close' }]))
      const tally = new Map<string, number>()
      for (const answer of insideExit) tally.set(JSON.stringify(answer), (tally.get(JSON.stringify(answer)) ?? 0) + 1)
      const answered = (exit: string, calls: object, count: number, alive: boolean | null) => ({
        [JSON.stringify({ exit, ...calls })]: count,
        [JSON.stringify({ exit, settlement: { kind: 'refused', reason: 'pty_exited' } })]: count,
        [JSON.stringify({ exit, cwd: null })]: count,
        [JSON.stringify({ exit, alive })]: count,
      })
      const over = { write: false, kill: false, resize: false, hasPty: false }
      expect(Object.fromEntries(tally)).toEqual({
        // Its stop stood unverified: the program may live, so a kill is dispatched again and nothing is known.
        ...answered('stop_unverified', { write: false, kill: true, resize: false, hasPty: null }, 6, null),
        ...answered('cause_unreported', over, hungUp.length, false),
        ...answered('operator_close', over, stoppedLater.length, false),
      })

      await controller.dispose()
      await provider.dispose()
      expect(process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap')).toEqual([])
      // The server's per-connection processes exit right after the client closed.
      await waitFor(() => (server.connections() === 0 ? true : undefined), 'the server to see every connection closed', 5_000)
      await sleep(20)
      expect(unhandled).toEqual([])
      // The errors: the listing asked while the link was down (the host dropped out of the scope),
      // and the stops that could not reach their programs then.
      expect(errors.filter((error) => !/^shutdown_failed: Provider ssh could not shut down /.test(error))).toEqual(['listing_failed: Host ssh:loopback failed to list its processes'])
    } finally {
      process.off('unhandledRejection', onUnhandled)
      await controller.dispose()
      await loopback.close()
    }
  }, 120_000)
})
