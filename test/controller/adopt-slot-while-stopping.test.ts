/**
 * `adoptSlot` of a slot whose tracked owner a `kill` is stopping. A slot spawn waits for that stop
 * to settle (the owner is no pane's any more: the seed's `exitingPtyIds` are "no longer any pane's
 * to show"), then starts a new process; `adoptSlot` handed the dying owner back (`isReattach`),
 * which died under the caller moments later. Now it waits the same way, then adopts what the slot
 * holds by then: nothing once the owner exited (`null`: the caller spawns), or the owner revived
 * when its stop window passed with the process still there (as a slot spawn re-attaches it).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PtySlotAdoption } from '../../src/contracts/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime, createInMemorySlotStore } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createHarness, scheduledShutdowns, type Harness } from './controller-harness.js'

function slotHarness(): Harness {
  return createHarness({ controller: { store: createInMemorySlotStore(), runtime: createInMemoryPtyRuntime() } })
}

const slot = { key: 'pane' }

describe('adoptSlot while a kill stops the slot owner', () => {
  it('waits for the stop, then answers null once the owner exited — as spawn({ slot }) then starts a new process (before: the dying owner)', async () => {
    const h = slotHarness()
    const owner = await h.run(h.controller.spawn({ slot }))
    h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
    expect(h.controller.kill(owner.id)).toBe(true)
    let adopted: PtySlotAdoption | null | undefined
    const adopting = h.controller.adoptSlot({ slot }).then((answer) => (adopted = answer))
    await h.settle()
    expect(adopted).toBeUndefined() // still waiting for the stop
    h.provider.emitExit(owner.id, { exitCode: 0, signal: 1 })
    expect(await h.run(adopting)).toBeNull()
    // What a slot spawn asked at the same moment does: a new process.
    const fresh = await h.run(h.controller.spawn({ slot }))
    expect(fresh.isReattach).not.toBe(true)
    expect(fresh.id).not.toBe(owner.id)
  })

  it('a slot spawn and an adoption queued behind the same kill agree: the adoption gets the new owner, never the one stopped', async () => {
    const h = slotHarness()
    const owner = await h.run(h.controller.spawn({ slot }))
    h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
    expect(h.controller.kill(owner.id)).toBe(true)
    const respawning = h.controller.spawn({ slot })
    const adopting = h.controller.adoptSlot({ slot })
    await h.settle()
    h.provider.emitExit(owner.id, { exitCode: 0, signal: 1 })
    const fresh = await h.run(respawning)
    const adopted = await h.run(adopting)
    expect(adopted?.owner.ptyId).toBe(fresh.id)
    expect(adopted?.result.incarnationId).toBe(fresh.incarnationId)
  })

  it('an owner still there when its stop window passed is revived and adopted, as a slot spawn re-attaches it', async () => {
    const h = slotHarness()
    const owner = await h.run(h.controller.spawn({ slot }))
    h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
    expect(h.controller.kill(owner.id)).toBe(true)
    const adopted = await h.run(h.controller.adoptSlot({ slot }))
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    expect(adopted).toMatchObject({ owner: { ptyId: owner.id }, result: { id: owner.id, incarnationId: owner.incarnationId, isReattach: true } })
    expect(h.controller.hasPty(owner.id)).toBe(true)
  })

  it('an adoption waiting for the stop when the controller is disposed rejects controller_disposed', async () => {
    const h = slotHarness()
    const owner = await h.run(h.controller.spawn({ slot }))
    h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
    h.controller.kill(owner.id)
    const adopting = h.controller.adoptSlot({ slot }).catch((error: unknown) => error)
    await h.settle()
    const disposing = h.controller.dispose()
    h.provider.emitExit(owner.id, { exitCode: 0, signal: 1 })
    await h.run(disposing)
    expect(await adopting).toMatchObject({ code: 'controller_disposed', method: 'adoptSlot' })
  })
})


describe('adoptSlot races with a kill of the slot owner', () => {
  it('an adoption asked after the kill never hands back the owner being stopped; one asked before may (it was live then)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 3 }), fc.boolean(), async (s, adoptions, respawn) => {
        const fake = createFakePtyProvider()
        const controller = createPtyController({ provider: scheduledShutdowns(s, fake), clock: createManualClock(), store: createInMemorySlotStore() })
        const owner = await controller.spawn({ slot })
        let killed = false
        const kill = s.schedule(Promise.resolve(), 'kill').then(() => {
          expect(controller.kill(owner.id)).toBe(true)
          killed = true
        })
        const respawned = respawn ? kill.then(() => controller.spawn({ slot })) : Promise.resolve(undefined)
        const adopted = Array.from({ length: adoptions }, (_, index) =>
          s.schedule(Promise.resolve(), `adoptSlot ${index}`).then(async () => {
            const askedAfterKill = killed
            return { askedAfterKill, adoption: await controller.adoptSlot({ slot }) }
          }),
        )
        const [, fresh, ...answers] = await s.waitFor(Promise.all([kill, respawned, ...adopted]))
        await s.waitAll()
        for (const { askedAfterKill, adoption } of answers) {
          if (!askedAfterKill) continue
          expect(adoption?.result.incarnationId).not.toBe(owner.incarnationId)
          if (adoption !== null) expect(adoption.result.incarnationId).toBe(fresh?.incarnationId)
        }
        expect(fake.getPty(owner.id)?.live).toBe(false)
        await s.waitFor(controller.dispose())
      }),
      { numRuns: 150 },
    )
  })
})
