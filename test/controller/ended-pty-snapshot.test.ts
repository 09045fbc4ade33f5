/**
 * `serializeProviderBuffer` / `serializeBuffer` of an ended PTY: answered from a provider that kept
 * its history (the pty host does), but only with the ended incarnation's own screen — a snapshot
 * that does not prove whose screen it is could be a later process's under the same id.
 */
import { describe, expect, it } from 'vitest'
import type { PtyIncarnationId, PtyProviderBufferSnapshot } from '../../src/contracts/index.js'
import { createHarness } from './controller-harness.js'

/** A harness whose fake answers every snapshot with `answer(id)`, also after the exit (as a provider that keeps history). */
async function endedPty(answer: (incarnationId: PtyIncarnationId) => PtyProviderBufferSnapshot | null) {
  const h = createHarness()
  const { id, incarnationId } = await h.controller.spawn({})
  if (incarnationId === undefined) throw new Error('the fake gives every spawn an incarnation id')
  h.provider.getBufferSnapshot = () => Promise.resolve(answer(incarnationId))
  h.provider.emitExit(id, { exitCode: 0 })
  await h.settle()
  expect(h.exits().map((exit) => exit.ptyId)).toEqual([id])
  return { h, id, incarnationId }
}

const screen = (incarnationId?: PtyIncarnationId): PtyProviderBufferSnapshot => ({
  data: 'LAST SCREEN',
  cols: 80,
  rows: 24,
  seq: 11,
  source: 'kept',
  ...(incarnationId === undefined ? {} : { incarnationId }),
})

describe('the snapshot of an ended PTY', () => {
  it("is the provider's kept screen when it names the ended incarnation", async () => {
    const { h, id, incarnationId } = await endedPty((own) => screen(own))
    expect(await h.controller.serializeProviderBuffer(id)).toEqual(screen(incarnationId))
    expect(await h.controller.serializeBuffer(id)).toMatchObject({ data: 'LAST SCREEN', cols: 80, rows: 24, seq: 11 })
  })

  it('is null when the snapshot does not say whose screen it is, or names another incarnation', async () => {
    for (const answer of [() => screen(), () => screen('someone-else' as PtyIncarnationId)]) {
      const { h, id } = await endedPty(answer)
      expect(await h.controller.serializeProviderBuffer(id)).toBeNull()
      expect(await h.controller.serializeBuffer(id)).toBeNull()
    }
  })

  it("of a live PTY is refused only when it names another incarnation (a snapshot without one is the live PTY's)", async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.controller.spawn({})
    h.provider.emitData(id, 'hello')
    await h.settle()
    expect(await h.controller.serializeProviderBuffer(id)).toMatchObject({ data: 'hello', incarnationId })
    h.provider.getBufferSnapshot = () => Promise.resolve(screen())
    expect(await h.controller.serializeProviderBuffer(id)).toEqual(screen())
    h.provider.getBufferSnapshot = () => Promise.resolve(screen('someone-else' as PtyIncarnationId))
    expect(await h.controller.serializeProviderBuffer(id)).toBeNull()
  })

  it('is null, and no provider fault, when the provider throws for the ended PTY (it forgot it)', async () => {
    const { h, id } = await endedPty(() => {
      throw new Error('no such PTY')
    })
    expect(await h.controller.serializeBuffer(id)).toBeNull()
    expect(h.errors()).toEqual([])
    // A live PTY's throw is the provider's fault, and reported.
    const { id: live } = await h.controller.spawn({})
    expect(await h.controller.serializeProviderBuffer(live)).toBeNull()
    expect(h.errors().map((error) => error.code)).toEqual(['provider_threw'])
  })

  it('is null, and no provider fault, when the PTY ends while the provider answers and it throws (the pty host refuses a released screen as history_released)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    // Asked while live; its exit reaches the controller before the refusal does.
    h.provider.getBufferSnapshot = async () => {
      h.provider.emitExit(id, { exitCode: 0 })
      await h.settle()
      throw Object.assign(new Error('The pty host no longer keeps the screen of this PTY'), { code: 'history_released' })
    }
    expect(await h.controller.serializeProviderBuffer(id)).toBeNull()
    expect(h.exits().map((exit) => exit.ptyId)).toEqual([id])
    expect(h.errors()).toEqual([])
  })

  it('is not asked of a provider for a PTY the controller never had', async () => {
    const h = createHarness()
    let asked = 0
    h.provider.getBufferSnapshot = () => {
      asked += 1
      return Promise.resolve(screen())
    }
    expect(await h.controller.serializeProviderBuffer('never-spawned')).toBeNull()
    expect(asked).toBe(0)
  })
})
