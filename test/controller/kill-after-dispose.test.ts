/**
 * A late `kill(id)` — from a timer or a promise callback — after `dispose()` began. Before, it
 * answered `false` at once, also while disposal was in fact stopping the PTY (and for a spawn or
 * attach of the id still coming, which then ran on when it re-attached or attached a process). The
 * answer is now the truth, as `kill`'s contract reads it (`true`: a stop is committed): `true`
 * while disposal is still stopping the PTY, and for a spawn or attach of the id still coming (it is
 * stopped when it lands, whatever it attached); `false` once disposal's stop of the PTY settled, for
 * a PTY `dispose({ stopPtys: false })` let go, and for an unknown or ended id. It never throws.
 * Over node-pty: test/node-pty/after-dispose.test.ts.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from '../../src/controller/index.js'
import { createInMemorySlotStore } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createHarness, holdAttaches, scheduledShutdowns, type Harness } from './controller-harness.js'

function shutdownCalls(h: Harness): unknown[][] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => [...call.args])
}

/** `kill(id)` from a timer callback, as a job's timeout or a view's teardown calls it. */
function killFromTimer(h: Harness, id: string): Promise<boolean> {
  return new Promise((resolve, reject) =>
    setTimeout(() => {
      try {
        resolve(h.controller.kill(id))
      } catch (error) {
        reject(error as Error)
      }
    }, 0),
  )
}

describe('kill after dispose() began', () => {
  it('true while disposal is still stopping the PTY (from a timer and a promise callback), false once its stop settled', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.run(h.controller.spawn({}))
    const ended = await h.run(h.controller.spawn({}))
    h.provider.emitExit(ended.id, { exitCode: 3 })
    await h.settle()
    // Its hang-up takes a while: disposal is still stopping it when the late calls come.
    h.provider.setShutdownBehaviour(id, 'never_confirm')
    const disposing = h.controller.dispose()
    await h.settle()
    expect(await Promise.resolve().then(() => h.controller.kill(id))).toBe(true)
    expect(await killFromTimer(h, id)).toBe(true)
    expect(h.controller.kill(ended.id)).toBe(false) // its death is proven
    expect(h.controller.kill('never-spawned')).toBe(false)
    // A late kill dispatches nothing more: disposal's stop is the one committed.
    expect(shutdownCalls(h)).toHaveLength(1)
    h.provider.emitExit(id, { exitCode: 0, signal: 1 })
    await h.run(disposing)
    expect(await killFromTimer(h, id)).toBe(false)
    expect(h.exits().map((exit) => [exit.incarnationId, exit.cause])).toEqual([
      [ended.incarnationId, { kind: 'exited', exitCode: 3 }],
      [incarnationId, { kind: 'operator_close' }],
    ])
  })

  it("a terminal handle's kill answers the same during and after dispose", async () => {
    const h = createHarness()
    const terminal = await h.run(h.controller.spawnTerminal({}))
    h.provider.setShutdownBehaviour(terminal.id, 'never_confirm')
    const disposing = h.controller.dispose()
    await h.settle()
    expect(terminal.kill()).toBe(true)
    h.provider.emitExit(terminal.id, { exitCode: 0, signal: 1 })
    await h.run(disposing)
    expect(terminal.kill()).toBe(false)
  })

  it('false for a PTY dispose({ stopPtys: false }) let go: nothing is stopped', async () => {
    const h = createHarness()
    const { id } = await h.run(h.controller.spawn({}))
    await h.run(h.controller.dispose({ stopPtys: false }))
    expect(await killFromTimer(h, id)).toBe(false)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([])
    expect(h.provider.getPty(id)?.live).toBe(true)
  })

  it('true for a spawn of the id in flight when dispose began; its process is stopped as it lands', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'job', hang: true })
    const spawned = h.controller.spawn({ sessionId: 'job' }).catch((error: unknown) => error)
    await h.settle()
    await h.run(h.controller.dispose())
    expect(await killFromTimer(h, 'job')).toBe(true)
    h.provider.releaseSpawn('job')
    expect(await h.run(spawned)).toMatchObject({ code: 'controller_disposed' })
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.controller.kill('job')).toBe(false) // nothing coming any more
  })

  it('true for an attach in flight when dispose began, and the process it attaches is stopped (before: left running)', async () => {
    const h = createHarness()
    const orphan = await h.provider.spawn({ sessionId: 'left-over' })
    const answer = holdAttaches(h)
    const attaching = h.controller.attach('left-over')
    await h.settle()
    const disposing = h.controller.dispose()
    expect(await killFromTimer(h, 'left-over')).toBe(true)
    answer()
    expect(await h.run(attaching)).toBe(false) // nobody tracks it
    await h.run(disposing)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([['left-over', { expectedIncarnationId: orphan.incarnationId, immediate: true }]])
    expect(h.provider.getPty('left-over')?.live).toBe(false)
  })

  it("an attach killed before dispose, landing after it: the kill's true holds — the process is stopped", async () => {
    const h = createHarness()
    await h.provider.spawn({ sessionId: 'left-over' })
    const answer = holdAttaches(h)
    const attaching = h.controller.attach('left-over')
    await h.settle()
    expect(h.controller.kill('left-over')).toBe(true)
    await h.run(h.controller.dispose())
    answer()
    expect(await h.run(attaching)).toBe(false)
    await h.settle()
    expect(h.provider.getPty('left-over')?.live).toBe(false)
  })

  it("a slot spawn re-attaching the slot's owner, killed after dispose began: the owner it re-attached is stopped (before: left running)", async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    // The pane's owner, created by an earlier window over the same host and store.
    const other = createPtyController({ provider: h.provider, store })
    const owner = await h.run(other.spawn({ slot: { key: 'pane' } }))
    await other.dispose({ stopPtys: false })
    const answer = holdAttaches(h)
    const restoring = h.controller.spawn({ slot: { key: 'pane' }, sessionId: owner.id }).catch((error: unknown) => error)
    await h.settle()
    await h.run(h.controller.dispose())
    expect(await killFromTimer(h, owner.id)).toBe(true)
    answer()
    expect(await h.run(restoring)).toMatchObject({ code: 'controller_disposed' })
    await h.settle()
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
  })

  it('an attach in flight that nobody killed is still left running by dispose', async () => {
    const h = createHarness()
    await h.provider.spawn({ sessionId: 'left-over' })
    const answer = holdAttaches(h)
    const attaching = h.controller.attach('left-over')
    await h.settle()
    await h.run(h.controller.dispose())
    answer()
    expect(await h.run(attaching)).toBe(false)
    await h.settle()
    expect(shutdownCalls(h)).toEqual([])
    expect(h.provider.getPty('left-over')?.live).toBe(true)
  })
})


describe('kill races with dispose', () => {
  it('never throws; true while dispose is still stopping the live PTY; false once dispose is over; and nothing is left running', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 4 }), async (s, kills) => {
        const fake = createFakePtyProvider()
        const controller = createPtyController({ provider: scheduledShutdowns(s, fake), clock: createManualClock() })
        const exits: PtyControllerExitEvent[] = []
        controller.on('exit', (event) => exits.push(event))
        const { id } = await controller.spawn({})
        let disposeBegun = false
        let disposeOver = false
        const disposed = s
          .schedule(Promise.resolve(), 'dispose')
          .then(() => {
            disposeBegun = true
            return controller.dispose()
          })
          .then(() => {
            disposeOver = true
          })
        const performed = Array.from({ length: kills }, () =>
          s.schedule(Promise.resolve(), 'kill').then(() => {
            const live = fake.getPty(id)?.live === true
            const answer = controller.kill(id) // a throw fails the property
            if (disposeOver) expect(answer).toBe(false)
            else if (disposeBegun && live) expect(answer).toBe(true)
            else if (!disposeBegun) expect(answer).toBe(live)
          }),
        )
        await s.waitFor(Promise.all([disposed, ...performed]))
        await s.waitAll()
        expect(fake.livePtyIds()).toEqual([])
        expect(exits.map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
      }),
      { numRuns: 150 },
    )
  })
})
