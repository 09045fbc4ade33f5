/**
 * A provider's report that output went by undelivered (`onOutputLoss`, the pty host after a
 * reconnect whose replay came too late): the controller's output sequence moves past the gap, so
 * it keeps matching the provider's own (its snapshots' `seq`).
 */
import { describe, expect, it, vi } from 'vitest'
import { createPtyController, type PtyControllerDataEvent, type PtyControllerOutputLossEvent } from 'ptykit/controller'
import { createInMemoryPtyRuntime, createInMemorySlotStore, type PtySlotStore } from 'ptykit/spawn'
import { createFakePtyProvider, createManualClock } from 'ptykit/testing'

function listen(controller: ReturnType<typeof createPtyController>): { log: string[]; data: PtyControllerDataEvent[]; losses: PtyControllerOutputLossEvent[] } {
  const log: string[] = []
  const data: PtyControllerDataEvent[] = []
  const losses: PtyControllerOutputLossEvent[] = []
  controller.on('data', (event) => {
    log.push(`data ${event.seq}`)
    data.push(event)
  })
  controller.on('outputLoss', (event) => {
    log.push(`loss ${event.fromSeq}-${event.toSeq}`)
    losses.push(event)
  })
  return { log, data, losses }
}

describe('output a provider lost on its way', () => {
  it('moves the output sequence past the gap: the next data and the provider’s snapshot agree on seq', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider })
    const { log, losses } = listen(controller)
    const { id, incarnationId } = await controller.spawn({})
    provider.emitData(id, 'abc')
    provider.emitOutputLoss(id, 1_000)
    provider.emitData(id, 'de')
    expect(log).toEqual(['data 3', 'loss 3-1003', 'data 1005'])
    expect(losses).toEqual([{ ptyId: id, hostId: 'local', incarnationId, fromSeq: 3, toSeq: 1_003 }])
    expect((await controller.serializeProviderBuffer(id))?.seq).toBe(1_005)
    await controller.dispose()
  })

  it('counts the gap through the runtime’s notePtyOutput, so a re-attach rebases on the right sequence', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const runtime = createInMemoryPtyRuntime()
    const controller = createPtyController({ provider, runtime })
    const { data } = listen(controller)
    const { id } = await controller.spawn({})
    provider.emitData(id, 'abc')
    provider.emitOutputLoss(id, 10)
    expect(runtime.getPtyOutputSequence(id)).toBe(13)
    provider.emitData(id, 'd')
    expect(data.map((event) => event.seq)).toEqual([3, 14])
    await controller.dispose()
  })

  it('with dataBatchMs, publishes the output batched before the gap first, at its own sequence', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const clock = createManualClock()
    const controller = createPtyController({ provider, clock, dataBatchMs: 5 })
    const { log, data } = listen(controller)
    const { id } = await controller.spawn({})
    provider.emitData(id, 'a')
    provider.emitData(id, 'bc')
    provider.emitOutputLoss(id, 7)
    provider.emitData(id, 'd')
    clock.advance(5)
    expect(log).toEqual(['data 1', 'data 3', 'loss 3-10', 'data 11'])
    expect(data.map((event) => event.data)).toEqual(['a', 'bc', 'd'])
    await controller.dispose()
  })

  it('owes flow control nothing for output nobody was handed', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider, clock: createManualClock(), flowControl: { mode: 'always' } })
    const { id } = await controller.spawn({})
    provider.emitData(id, 'x'.repeat(100))
    provider.emitOutputLoss(id, 1_000_000)
    expect(controller.getFlowControlState(id)).toMatchObject({ unacknowledgedChars: 100, paused: false })
    expect(provider.getPty(id)?.paused).toBe(false)
    await controller.dispose()
  })

  it('holds a gap reported while the spawn is still being published, in order with the output around it', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    // The slot store binds slowly: the provider has replied, the PTY is not published yet.
    const slots = createInMemorySlotStore()
    let bind!: () => void
    const bound = new Promise<void>((resolve) => (bind = resolve))
    const store: PtySlotStore = {
      getLiveOwner: (slot) => slots.getLiveOwner(slot),
      getPersistedOwner: (slot) => slots.getPersistedOwner(slot),
      bindOwner: async (slot, owner) => {
        await bound
        slots.bindOwner(slot, owner)
      },
      retireOwner: (slot, owner) => slots.retireOwner(slot, owner),
    }
    const controller = createPtyController({ provider, store })
    const { log } = listen(controller)
    const spawning = controller.spawn({ slot: { key: 'main' } })
    await vi.waitFor(() => expect(provider.livePtyIds()).toHaveLength(1))
    const [id] = provider.livePtyIds()
    provider.emitData(id!, 'ab')
    provider.emitOutputLoss(id!, 100)
    provider.emitData(id!, 'c')
    bind()
    await spawning
    expect(log).toEqual(['data 2', 'loss 2-102', 'data 103'])
    expect((await controller.serializeProviderBuffer(id!))?.seq).toBe(103)
    await controller.dispose()
  })

  it('drops a gap that ends where the spawn result places the stream (its providerSequence counts it)', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider })
    const { log } = listen(controller)
    // An attach whose replay starts at 50: what fell out of the ring before it is no gap in the stream.
    provider.scriptNextSpawn({ hang: true, providerSequence: { value: 50, generation: 'continued' } })
    const spawning = controller.spawn({})
    await vi.waitFor(() => expect(provider.pendingSpawnCount()).toBe(1))
    const [id] = provider.livePtyIds()
    provider.emitOutputLoss(id!, 50)
    provider.emitData(id!, 'ab')
    provider.releaseSpawn(id)
    await spawning
    expect(log).toEqual(['data 52'])
    await controller.dispose()
  })

  it.each(['attach', 'spawn'] as const)(
    'reports the output dropped while a stop was unverified as a gap when %s revives the PTY',
    async (via) => {
      const provider = createFakePtyProvider({ scheduling: 'manual' })
      const clock = createManualClock()
      const controller = createPtyController({ provider, clock })
      const { log, losses } = listen(controller)
      controller.on('spawn', (event) => log.push(`spawn${event.isReattach ? ' reattach' : ''}`))
      controller.on('exit', (event) => log.push(`exit ${event.cause.kind}`))
      const { incarnationId } = await controller.spawn({ sessionId: 'x' })
      provider.emitData('x', 'abc')
      provider.setShutdownBehaviour('x', 'never_confirm')
      expect(controller.kill('x')).toBe(true)
      await provider.settle()
      clock.advance(60_000)
      await provider.settle()
      // Published as ended (unverified): what it prints now, and a gap its provider reports, reach nobody.
      provider.emitData('x', 'lost!')
      provider.emitOutputLoss('x', 100)
      if (via === 'attach') expect(await controller.attach('x')).toBe(true)
      else await controller.spawn({ sessionId: 'x' })
      provider.emitData('x', 'de')
      expect(log).toEqual(['spawn', 'data 3', 'exit unknown', 'spawn reattach', 'loss 3-108', 'data 110'])
      expect(losses).toEqual([{ ptyId: 'x', hostId: 'local', incarnationId, fromSeq: 3, toSeq: 108 }])
      expect((await controller.serializeProviderBuffer('x'))?.seq).toBe(110)
      provider.setShutdownBehaviour('x', 'confirm')
      const disposed = controller.dispose()
      for (let i = 0; i < 20 && clock.nextTimerAt() !== null; i++) {
        await provider.settle()
        clock.advance(Math.max(0, clock.nextTimerAt()! - clock.now()))
      }
      await disposed
    },
  )

  it('ignores a loss of another incarnation, a malformed range, and one after the exit', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    let fire: ((event: unknown) => void) | undefined
    const withRawLoss = Object.assign(Object.create(provider) as typeof provider, {
      onOutputLoss: (listener: (event: unknown) => void) => {
        fire = listener
        return () => undefined
      },
    })
    const controller = createPtyController({ provider: withRawLoss })
    const { log } = listen(controller)
    const { id, incarnationId } = await controller.spawn({})
    fire!({ id, fromSeq: 0, toSeq: 5, incarnationId: 'fake-inc-other' })
    fire!({ id, fromSeq: 5, toSeq: 5, incarnationId })
    fire!({ id, fromSeq: -1, toSeq: 5, incarnationId })
    fire!({ id, fromSeq: 0, toSeq: Number.NaN, incarnationId })
    fire!(null)
    provider.emitData(id, 'a')
    expect(log).toEqual(['data 1'])
    fire!({ id, fromSeq: 1, toSeq: 4, incarnationId })
    expect(log).toEqual(['data 1', 'loss 1-4'])
    // Nothing follows an exit.
    provider.emitExit(id, { exitCode: 0 })
    await provider.settle()
    fire!({ id, fromSeq: 4, toSeq: 9, incarnationId })
    expect(log.filter((entry) => entry.startsWith('loss'))).toEqual(['loss 1-4'])
    await controller.dispose()
  })
})
