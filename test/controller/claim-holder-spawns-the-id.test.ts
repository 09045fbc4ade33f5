/**
 * Spawns of one session id take turns (spawn-publication.ts): a spawn outside a slot waits for the
 * spawns of its id begun before it. A slot's spawn still waiting for its slot's turn is not one it
 * waits for: that turn may be a `claimSlotCreate` claim held by the very caller of the later spawn,
 * who releases it (in a `finally`, as docs/controller.md shows) only once that spawn returns — the
 * spawn waited for ever (until its signal or `dispose`).
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

describe('a claim holder spawning an id that a slot spawn queued behind its claim names too', () => {
  it('is not held behind its own claim', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const slot = { key: 'pane', scopeId: 'window' }
    const release = controller.claimSlotCreate(slot)
    // Another caller's slot spawn, queued behind the claim, names session id X.
    const queued = controller.spawn({ slot, sessionId: 'X' })
    let outcome: unknown
    try {
      // The holder, inside its claim, spawns X outside the slot.
      outcome = await Promise.race([
        controller.spawn({ sessionId: 'X' }).then((reply) => ({ isReattach: reply.isReattach === true })),
        new Promise((resolve) => setTimeout(() => resolve('still waiting behind the claim'), 1_000)),
      ])
    } finally {
      release()
    }
    expect(outcome).toEqual({ isReattach: false })
    // The slot spawn, in its turn once the claim is released, finds X live and attaches to it.
    expect((await queued).isReattach).toBe(true)
    await controller.dispose()
  })
})
