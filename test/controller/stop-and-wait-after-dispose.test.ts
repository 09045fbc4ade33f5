/**
 * A late `stopAndWait(id)` — from a timer or a promise callback, as a host's tab closes while the
 * app quits — after `dispose()` began. Before, it answered `false` at once, even for a PTY that
 * disposal was about to verify stopped, while a terminal handle's `stop()` waited for disposal.
 * Now both answer disposal's verdict of the PTY (the seed: "true only if the stop was verified"),
 * within the caller's deadline and signal. And a late `kill` of a PTY whose stop disposal gave up
 * on (`stop_unverified`) still reaches it with a forced shutdown, as a `kill` of an unverified PTY
 * does before `dispose()` (before: `false`, nothing dispatched).
 * Over node-pty: test/node-pty/stop-and-wait-after-dispose.test.ts.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createHarness, holdAttaches, scheduledShutdowns, type Harness } from './controller-harness.js'

function shutdownCalls(h: Harness): unknown[][] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => [...call.args])
}

/** `call()` from a timer callback. */
function fromTimer<T>(call: () => Promise<T> | T): Promise<T> {
  return new Promise((resolve, reject) => setTimeout(() => Promise.resolve().then(call).then(resolve, reject), 0))
}

describe('stopAndWait after dispose() began', () => {
  it("waits for disposal's verdict of the PTY: true once its stop is verified, false for one disposal gives up on", async () => {
    const h = createHarness()
    const verified = await h.run(h.controller.spawn({}))
    const givenUp = await h.run(h.controller.spawn({}))
    const ended = await h.run(h.controller.spawn({}))
    h.provider.emitExit(ended.id, { exitCode: 3 })
    await h.settle()
    // Both hang-ups take a while: disposal is still stopping them when the late calls come.
    h.provider.setShutdownBehaviour(verified.id, 'never_confirm')
    h.provider.setShutdownBehaviour(givenUp.id, 'never_confirm')
    const disposing = h.controller.dispose()
    await h.settle()
    const fromPromise = Promise.resolve().then(() => h.controller.stopAndWait(verified.id))
    const fromATimer = fromTimer(() => h.controller.stopAndWait(verified.id))
    const ofGivenUp = fromTimer(() => h.controller.stopAndWait(givenUp.id))
    const ofEnded = fromTimer(() => h.controller.stopAndWait(ended.id))
    const ofUnknown = fromTimer(() => h.controller.stopAndWait('never-spawned'))
    await new Promise((resolve) => setTimeout(resolve, 5))
    // The verified one dies of its hang-up; disposal lists it absent.
    h.provider.emitExit(verified.id, { exitCode: 0, signal: 1 })
    await h.run(disposing)
    expect(await fromPromise).toBe(true)
    expect(await fromATimer).toBe(true)
    expect(await ofGivenUp).toBe(false)
    expect(await ofEnded).toBe(true) // its death is proven
    expect(await ofUnknown).toBe(false) // no host is asked any more
    // Nothing more was dispatched by the late calls: disposal's stops are the ones committed.
    expect(shutdownCalls(h).filter(([id]) => id === verified.id)).toHaveLength(1)
    // After dispose is over: the same truths, at once.
    expect(await h.controller.stopAndWait(verified.id)).toBe(true)
    expect(await h.controller.stopAndWait(givenUp.id)).toBe(false)
    expect(await h.controller.stopAndWait(ended.id)).toBe(true)
  })

  it("a terminal handle's stop() answers the same as the controller's stopAndWait, during and after dispose", async () => {
    const h = createHarness()
    const verified = await h.run(h.controller.spawnTerminal({}))
    const givenUp = await h.run(h.controller.spawnTerminal({}))
    h.provider.setShutdownBehaviour(verified.id, 'never_confirm')
    h.provider.setShutdownBehaviour(givenUp.id, 'never_confirm')
    const disposing = h.controller.dispose()
    await h.settle()
    const answers = Promise.all([
      verified.stop(),
      h.controller.stopAndWait(verified.id),
      givenUp.stop(),
      h.controller.stopAndWait(givenUp.id),
    ])
    h.provider.emitExit(verified.id, { exitCode: 0, signal: 1 })
    await h.run(disposing)
    expect(await answers).toEqual([true, true, false, false])
    expect(await Promise.all([verified.stop(), h.controller.stopAndWait(verified.id), givenUp.stop(), h.controller.stopAndWait(givenUp.id)])).toEqual([
      true,
      true,
      false,
      false,
    ])
  })

  it("the caller's own deadline and signal still bound the wait: false before disposal's verdict", async () => {
    const h = createHarness()
    const terminal = await h.run(h.controller.spawnTerminal({}))
    h.provider.setShutdownBehaviour(terminal.id, 'never_confirm')
    const disposing = h.controller.dispose()
    await h.settle()
    const aborter = new AbortController()
    const aborted = h.controller.stopAndWait(terminal.id, { signal: aborter.signal })
    const handleAborted = terminal.stop({ signal: aborter.signal })
    aborter.abort()
    expect(await aborted).toBe(false)
    expect(await handleAborted).toBe(false)
    const short = h.controller.stopAndWait(terminal.id, { timeoutMs: 100 })
    const handleShort = terminal.stop({ timeoutMs: 100 })
    expect(await h.run(short)).toBe(false)
    expect(await h.run(handleShort)).toBe(false)
    // Disposal is still at it (its own deadline is 10 s): the process then dies and is verified.
    expect(h.clock.now()).toBeLessThan(1_000)
    const patient = h.controller.stopAndWait(terminal.id)
    h.provider.emitExit(terminal.id, { exitCode: 0, signal: 1 })
    await h.run(disposing)
    expect(await patient).toBe(true)
  })

  it('false for a PTY dispose({ stopPtys: false }) let go: nothing is stopped', async () => {
    const h = createHarness()
    const { id } = await h.run(h.controller.spawn({}))
    await h.run(h.controller.dispose({ stopPtys: false }))
    expect(await fromTimer(() => h.controller.stopAndWait(id))).toBe(false)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([])
    expect(h.provider.getPty(id)?.live).toBe(true)
  })

  it('an id no host ever held: true before dispose (every host listed it absent), false after (no host is asked any more: not verified)', async () => {
    const h = createHarness()
    // Before: the seed's "true only if the stop was verified by inventory" — a fresh listing proves it absent.
    expect(await h.run(h.controller.stopAndWait('never-held', { timeoutMs: 1_000 }))).toBe(true)
    await h.run(h.controller.dispose())
    const asked = h.provider.calls.length
    // After: the controller no longer asks the providers (the host owns them, and may be tearing
    // them down), so nothing verifies the absence: `false` is "not verified", never "still running".
    expect(await fromTimer(() => h.controller.stopAndWait('never-held', { timeoutMs: 1_000 }))).toBe(false)
    expect(h.provider.calls.slice(asked)).toEqual([])
    expect(h.exits()).toEqual([])
  })

  it('false for an attach of the id still coming, which it marks as kill does: the process it attaches is stopped (before: left running)', async () => {
    const h = createHarness()
    const orphan = await h.provider.spawn({ sessionId: 'left-over' })
    // The host answers attach-only calls late (busy restoring sessions).
    const answer = holdAttaches(h)
    const attaching = h.controller.attach('left-over')
    await h.settle()
    await h.run(h.controller.dispose())
    expect(await fromTimer(() => h.controller.stopAndWait('left-over'))).toBe(false)
    answer()
    expect(await h.run(attaching)).toBe(false)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['left-over', { expectedIncarnationId: orphan.incarnationId, immediate: true }]])
    expect(h.provider.getPty('left-over')?.live).toBe(false)
  })
})

describe('kill after dispose() gave up on a stop (stop_unverified)', () => {
  it('dispatches a forced shutdown fenced by the incarnation and answers true, as before dispose (before: false, the process ran on)', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.run(h.controller.spawn({}))
    const terminal = await h.run(h.controller.spawnTerminal({}))
    h.provider.setShutdownBehaviour(id, 'never_confirm')
    h.provider.setShutdownBehaviour(terminal.id, 'never_confirm')
    await h.run(h.controller.dispose())
    expect(h.exits().map((exit) => [exit.ptyId, exit.cause])).toEqual([
      [id, { kind: 'unknown', reason: 'stop_unverified' }],
      [terminal.id, { kind: 'unknown', reason: 'stop_unverified' }],
    ])
    expect(h.provider.getPty(id)?.live).toBe(true)
    // The process would now die of a forced stop (a slow host that has caught up).
    h.provider.setShutdownBehaviour(id, 'confirm')
    h.provider.setShutdownBehaviour(terminal.id, 'confirm')
    const before = shutdownCalls(h).length
    expect(await fromTimer(() => h.controller.kill(id))).toBe(true)
    expect(terminal.kill()).toBe(true)
    await h.settle()
    expect(shutdownCalls(h).slice(before)).toEqual([
      [id, { expectedIncarnationId: incarnationId, immediate: true }],
      [terminal.id, { expectedIncarnationId: terminal.incarnationId, immediate: true }],
    ])
    expect(h.provider.livePtyIds()).toEqual([])
    // Its stop is still unverified (nobody can follow it up): stopAndWait does not claim it.
    expect(await h.controller.stopAndWait(id)).toBe(false)
  })

  it('a PTY dispose({ stopPtys: false }) let go, with a stop unverified before dispose: kill still answers false and dispatches nothing', async () => {
    const h = createHarness()
    const { id } = await h.run(h.controller.spawn({}))
    h.provider.setShutdownBehaviour(id, 'fail')
    expect(h.controller.kill(id)).toBe(true)
    await h.settle()
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    await h.run(h.controller.dispose({ stopPtys: false }))
    const before = shutdownCalls(h).length
    expect(h.controller.kill(id)).toBe(false)
    await h.settle()
    expect(shutdownCalls(h).length).toBe(before)
  })
})


describe('stopAndWait races with dispose', () => {
  it("every late stopAndWait and handle stop() answers true once disposal verified the stop; never a throw; nothing left running", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 3 }), fc.boolean(), async (s, calls, viaHandle) => {
        const fake = createFakePtyProvider()
        const controller = createPtyController({ provider: scheduledShutdowns(s, fake), clock: createManualClock() })
        const exits: PtyControllerExitEvent[] = []
        controller.on('exit', (event) => exits.push(event))
        const terminal = await controller.spawnTerminal({})
        const disposed = s.schedule(Promise.resolve(), 'dispose').then(() => controller.dispose())
        const answers = Array.from({ length: calls }, (_, index) =>
          s
            .schedule(Promise.resolve(), `stopAndWait ${index}`)
            .then(() => (viaHandle && index % 2 === 0 ? terminal.stop() : controller.stopAndWait(terminal.id))),
        )
        const all = await s.waitFor(Promise.all([disposed, ...answers]))
        await s.waitAll()
        expect(all.slice(1)).toEqual(Array.from({ length: calls }, () => true))
        expect(fake.livePtyIds()).toEqual([])
        expect(exits.map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
      }),
      { numRuns: 150 },
    )
  })
})
