/**
 * A `stopAndWait` still escalating against a PTY whose stop window ran out (`stop_unverified`) and
 * that an attach then revived: the PTY is live again and keeps its stop intent, with no stop window
 * armed — but a stop of it IS under way (the force is still to come). A slot spawn or an adoption
 * of its slot then waits for that stop, as for any stop under way, rather than re-attaching the
 * PTY the `stopAndWait` is about to force down.
 */
import { describe, expect, it } from 'vitest'
import { createInMemorySlotStore } from '../../src/spawn/index.js'
import { answerOf, createHarness, slotOwnerWithUnverifiedStop, type Harness } from './controller-harness.js'

/** Hang-ups never answer (a host that does not carry them out); a forced stop goes through. */
function hangUpsHang(h: Harness): void {
  const shutdown = h.provider.shutdown.bind(h.provider)
  h.provider.shutdown = (id, options) => (options?.immediate === true ? shutdown(id, options) : new Promise<void>(() => undefined))
}

/**
 * The slot `pane`'s owner, whose `stopAndWait` (deadline 60 s, force at 20 s) has outlived its stop
 * window (10 s, `stop_unverified`), then revived by an adoption of the slot (its host still holds it).
 */
async function revivedWhileStopAndWaitRuns() {
  const store = createInMemorySlotStore()
  const h = createHarness({ controller: { store, stop: { unconfirmedAfterMs: 10_000, forceAfterMs: 20_000 } } })
  const owner = await h.run(h.controller.spawn({ slot: { key: 'pane' } }))
  hangUpsHang(h)
  let verdict: boolean | undefined
  void h.controller.stopAndWait(owner.id, { timeoutMs: 60_000 }).then((answer) => (verdict = answer))
  await h.settle()
  h.clock.advance(10_000)
  await h.settle()
  expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
  return { h, owner, verdict: () => verdict }
}

describe('a stopAndWait still under way when an attach revives its PTY', () => {
  it('a slot spawn waits for it, then starts a new process (before: it re-attached the PTY being forced down)', async () => {
    const { h, owner, verdict } = await revivedWhileStopAndWaitRuns()
    // The app re-attaches the pane's PTY (its host still holds it): live again.
    const revived = await h.run(h.controller.attach(owner.id))
    expect(revived).toBe(true)
    expect(h.controller.hasPty(owner.id)).toBe(true)
    const spawning = h.controller.spawn({ slot: { key: 'pane' } })
    const answered = answerOf(spawning)
    for (let i = 0; i < 5; i++) await h.settle()
    // Before: answered at once, re-attaching the owner (isReattach: true) — which the force then
    // stopped under the caller.
    expect(answered()).toBeUndefined()
    const reply = await h.run(spawning)
    expect(verdict()).toBe(true)
    expect(reply.isReattach).toBe(false)
    expect(reply.id).not.toBe(owner.id)
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    expect(h.provider.getPty(reply.id)?.live).toBe(true)
  })

  it('an adoption of the slot waits for it too, then finds the slot empty (before: it handed back the PTY being forced down)', async () => {
    const { h, owner, verdict } = await revivedWhileStopAndWaitRuns()
    expect(await h.run(h.controller.attach(owner.id))).toBe(true)
    const adopting = h.controller.adoptSlot({ slot: { key: 'pane' } })
    const answered = answerOf(adopting)
    for (let i = 0; i < 5; i++) await h.settle()
    expect(answered()).toBeUndefined()
    expect(await h.run(adopting)).toBeNull()
    expect(verdict()).toBe(true)
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
  })
})

describe('a stopAndWait escalating against a PTY whose stop already went unverified', () => {
  /** The slot `pane`'s owner: a kill went unverified (10 s), then a `stopAndWait` of it (force 5 s later) began. */
  async function stopAndWaitOfUnverified() {
    const { h, owner } = await slotOwnerWithUnverifiedStop({ unconfirmedAfterMs: 10_000, forceAfterMs: 5_000 })
    h.provider.setShutdownBehaviour(owner.id, 'confirm')
    hangUpsHang(h)
    let verdict: boolean | undefined
    void h.controller.stopAndWait(owner.id, { timeoutMs: 60_000 }).then((answer) => (verdict = answer))
    await h.settle()
    return { h, owner, verdict: () => verdict }
  }

  it('a slot spawn meanwhile waits for it, then starts a new process (before: it revived the owner and handed it back, to be forced down)', async () => {
    const { h, owner, verdict } = await stopAndWaitOfUnverified()
    const spawning = h.controller.spawn({ slot: { key: 'pane' } })
    const answered = answerOf(spawning)
    for (let i = 0; i < 5; i++) await h.settle()
    expect(answered()).toBeUndefined()
    const reply = await h.run(spawning)
    expect(reply.isReattach).toBe(false)
    expect(h.provider.getPty(owner.id)?.live).toBe(false)
    expect(h.provider.getPty(reply.id)?.live).toBe(true)
    for (let i = 0; i < 5 && verdict() === undefined; i++) await h.settle()
    expect(verdict()).toBe(true)
  })

  it('a stopAndWait that gives up releases the spawn at once: it re-attaches the owner its host still holds', async () => {
    const { h, owner, verdict } = await stopAndWaitOfUnverified()
    // Neither stop goes through: the forced one is lost too.
    h.provider.setShutdownBehaviour(owner.id, 'never_confirm')
    const spawning = h.controller.spawn({ slot: { key: 'pane' } })
    const answered = answerOf(spawning)
    for (let i = 0; i < 5; i++) await h.settle()
    expect(answered()).toBeUndefined()
    // The force (5 s on) is lost, and the stop is not verified: the stopAndWait answers false before its deadline.
    h.clock.advance(5_000)
    for (let i = 0; i < 10 && verdict() === undefined; i++) await h.settle()
    expect(verdict()).toBe(false)
    for (let i = 0; i < 5; i++) await h.settle()
    expect(answered()).toMatchObject({ id: owner.id, incarnationId: owner.incarnationId, isReattach: true })
  })
})
