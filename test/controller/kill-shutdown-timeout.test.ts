/**
 * A `kill` whose provider stop runs out of time (`shutdown_timeout`: sent, not seen done by its
 * deadline — under load, or joining a provider disposal's stop) may still land a moment later. Its
 * `shutdown_failed` report and the `stop_unverified` exit wait for the unconfirmed-stop window
 * `kill` armed (held-stop-report.ts): the exit within it is an operator close with nothing
 * reported; at its end the PTY is published `stop_unverified` (`shutdown_failed`) and the failure
 * reported. A refusal is still reported and published at once. (Before: one `shutdown_failed` and
 * an immediate `stop_unverified` exit per PTY, then a second exit, `operator_close`, when the stop landed.)
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, STOP_UNCONFIRMED_AFTER_MS } from '../../src/controller/index.js'
import { createFakePtyProvider, createManualClock } from '../../src/testing/index.js'
import { createHarness } from './controller-harness.js'

const timedOut = (id: string): Error => Object.assign(new Error(`PTY ${JSON.stringify(id)} could not be stopped by its deadline`), { code: 'shutdown_timeout' })
const hostTimedOut = (id: string): Error =>
  Object.assign(new Error(`PTY ${JSON.stringify(id)} could not be stopped by its deadline`), { code: 'host_error', hostCode: 'shutdown_timeout' })

async function setup(rejection: (id: string) => unknown) {
  const clock = createManualClock()
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider, clock })
  const events: string[] = []
  controller.on('error', (error) => events.push(`error ${error.code}`))
  controller.on('exit', (exit) => events.push(`exit ${exit.code} ${exit.cause.kind}${'reason' in exit.cause ? `/${String(exit.cause.reason)}` : ''}`))
  controller.on('liveness', (event) => events.push(`liveness ${event.verdict.kind}${event.verdict.kind === 'unverifiable' ? `/${event.verdict.reason}` : ''}`))
  const { id } = await controller.spawn({})
  const rejects: Array<() => void> = []
  provider.shutdown = (ptyId) =>
    new Promise<void>((_resolve, reject) => {
      rejects.push(() => reject(rejection(ptyId)))
    })
  const reject = async (): Promise<void> => {
    for (const each of rejects.splice(0)) each()
    await flush()
  }
  return { clock, provider, controller, events, id, reject }
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve()
}

describe('kill whose provider stop ran out of time', () => {
  for (const [name, rejection] of [
    ['shutdown_timeout', timedOut],
    ["the pty host's host_error/shutdown_timeout", hostTimedOut],
  ] as const) {
    it(`reports nothing when the stop lands within the unconfirmed window (${name})`, async () => {
      const { clock, provider, controller, events, id, reject } = await setup(rejection)
      expect(controller.kill(id)).toBe(true)
      await reject()
      clock.advance(STOP_UNCONFIRMED_AFTER_MS / 2)
      await flush()
      expect(events).toEqual([])
      provider.emitExit(id, { exitCode: 0, signal: 9 })
      await flush()
      clock.advance(STOP_UNCONFIRMED_AFTER_MS)
      await flush()
      expect(events).toEqual(['exit 0 operator_close', 'liveness exited'])
      await controller.dispose({ stopPtys: false })
    })
  }

  it('reports shutdown_failed and publishes stop_unverified at the end of the window when no exit comes', async () => {
    const { clock, provider, controller, events, id, reject } = await setup(timedOut)
    const started = clock.now()
    controller.kill(id)
    clock.advance(1_000)
    await reject()
    expect(events).toEqual([])
    // The window `kill` armed, not one from the rejection: it ends STOP_UNCONFIRMED_AFTER_MS after the kill.
    clock.advance(started + STOP_UNCONFIRMED_AFTER_MS - clock.now() - 1)
    await flush()
    expect(events).toEqual([])
    clock.advance(1)
    await flush()
    expect(events).toEqual(['error shutdown_failed', 'exit -1 unknown/stop_unverified', 'liveness unverifiable/shutdown_failed'])
    // A late exit is the real cause, as for any unverified stop.
    provider.emitExit(id, { exitCode: 0, signal: 9 })
    await flush()
    expect(events.slice(3)).toEqual(['exit 0 operator_close', 'liveness exited'])
    await controller.dispose({ stopPtys: false })
  })

  it('reports nothing when the exit came before the rejection', async () => {
    const { clock, provider, controller, events, id, reject } = await setup(timedOut)
    controller.kill(id)
    provider.emitExit(id, { exitCode: 0, signal: 9 })
    await reject()
    clock.advance(STOP_UNCONFIRMED_AFTER_MS * 2)
    await flush()
    expect(events).toEqual(['exit 0 operator_close', 'liveness exited'])
    await controller.dispose({ stopPtys: false })
  })

  it('still reports a refusal, and publishes stop_unverified, at once', async () => {
    const { controller, events, id, reject } = await setup((ptyId) => new Error(`refused ${ptyId}`))
    controller.kill(id)
    await reject()
    expect(events).toEqual(['error shutdown_failed', 'exit -1 unknown/stop_unverified', 'liveness unverifiable/shutdown_failed'])
    await controller.dispose({ stopPtys: false })
  })

  it('reports nothing for a held rejection once the controller is disposed', async () => {
    const { clock, controller, events, id, reject } = await setup(timedOut)
    controller.kill(id)
    await reject()
    const disposing = controller.dispose({ stopPtys: false })
    clock.runAll()
    await disposing
    clock.runAll()
    await flush()
    expect(events.filter((event) => event.startsWith('error'))).toEqual([])
    expect(clock.pendingTimerCount()).toBe(0)
  })

  it('holds one report per PTY for two kills that both ran out of time', async () => {
    const { clock, controller, events, id, reject } = await setup(timedOut)
    controller.kill(id)
    controller.kill(id)
    await reject()
    clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    await flush()
    expect(events).toEqual(['error shutdown_failed', 'exit -1 unknown/stop_unverified', 'liveness unverifiable/shutdown_failed'])
    await controller.dispose({ stopPtys: false })
  })

  it("plays the same with the fake's scripted 'time_out' stop, then the exit it emits", async () => {
    const clock = createManualClock()
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, clock })
    const events: string[] = []
    controller.on('error', (error) => events.push(`error ${error.code}`))
    controller.on('exit', (exit) => events.push(`exit ${exit.code} ${exit.cause.kind}`))
    provider.scriptNextSpawn({ shutdown: 'time_out' })
    const { id } = await controller.spawn({})
    controller.kill(id)
    await provider.settle()
    await flush()
    expect(provider.getPty(id)?.live).toBe(true)
    expect(events).toEqual([])
    provider.emitExit(id, { exitCode: 0, signal: 9 })
    clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    await flush()
    expect(events).toEqual(['exit 0 operator_close'])
    await controller.dispose({ stopPtys: false })
  })

  it('keeps the stop under way while the report is held: a restart under the session id waits for the exit', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'time_out' })
    const old = await h.controller.spawn({ sessionId: 'tab-1' })
    h.controller.kill(old.id)
    let settled = false
    const fresh = h.controller.spawn({ sessionId: 'tab-1' }).finally(() => (settled = true))
    await h.settle()
    expect(settled).toBe(false)
    // The stop lands late.
    h.provider.emitExit(old.id, { exitCode: 0, signal: 9 })
    const reply = await h.run(fresh)
    expect(reply.incarnationId).not.toBe(old.incarnationId)
    expect(reply.isReattach).not.toBe(true)
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([[old.incarnationId, { kind: 'operator_close' }]])
    expect(h.errors()).toEqual([])
  })
})
