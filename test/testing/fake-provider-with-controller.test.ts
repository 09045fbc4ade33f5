// The five setups of docs/testing-with-the-fake-provider.md, run against the real controller, so
// the guide cannot drift from what the fake and the controller do.
import { describe, it, expect, vi, afterEach } from 'vitest'
import { STOP_UNCONFIRMED_AFTER_MS, createPtyController } from 'ptykit/controller'
import { FLOW_CONTROL_HIGH_WATERMARK_CHARS } from '../../src/controller/flow-control.js'
import { createFakePtyProvider, createManualClock, type FakePtyProviderOptions } from 'ptykit/testing'

function setup(options?: FakePtyProviderOptions) {
  const provider = createFakePtyProvider(options)
  const controller = createPtyController({ provider })
  const events: string[] = []
  controller.on('data', (e) => events.push(`data:${e.data}`))
  controller.on('exit', (e) => events.push(`exit:${e.code}:${JSON.stringify(e.cause)}`))
  return { provider, controller, events }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('docs: testing with the fake provider', () => {
  it('1. a clean exit', async () => {
    const { provider, controller, events } = setup()
    provider.scriptNextSpawn({ output: ['building…\r\n', 'done\r\n'], exit: { exitCode: 0 } })
    const { id } = await controller.spawn({ file: 'make' })
    await provider.settle()
    expect(events).toEqual(['data:building…\r\n', 'data:done\r\n', 'exit:0:{"kind":"exited","exitCode":0}'])
    expect(controller.write(id, 'too late', 'driving')).toBe(false)
    await controller.dispose()
  })

  it('1b. an old sender’s bare 0 is not proof of success', async () => {
    const { provider, controller, events } = setup()
    provider.scriptNextSpawn({ exit: { exitCode: 0, withoutCause: true } })
    await controller.spawn({})
    await provider.settle()
    expect(events).toEqual(['exit:0:{"kind":"unknown","reason":"cause_unreported"}'])
    await controller.dispose()
  })

  it('2. killed by a signal with exit code 0', async () => {
    const { provider, controller } = setup()
    provider.scriptNextSpawn({ output: ['allocating…\r\n'], exit: { exitCode: 0, signal: 9 } })
    const exits: unknown[] = []
    controller.on('exit', (e) => exits.push(e))
    const { id } = await controller.spawn({})
    await provider.settle()
    expect(exits).toEqual([{ ptyId: id, hostId: 'local', incarnationId: expect.any(String), code: 0, cause: { kind: 'signaled', signal: 9 } }])
    await controller.dispose()
  })

  it('3. the exit races the spawn reply', async () => {
    const { provider, controller } = setup()
    const committed = vi.fn()
    provider.scriptNextSpawn({ output: ['fatal: bad config\r\n'], exitBeforeReply: { exitCode: 2 } })
    await expect(controller.spawn({ onPtySpawnCommitted: committed })).rejects.toMatchObject({ code: 'exited_during_start' })
    expect(committed).toHaveBeenCalledTimes(1)
    expect(provider.livePtyIds()).toEqual([])
    await controller.dispose()
  })

  it('4. a stop that is never confirmed', async () => {
    const clock = createManualClock()
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, clock })
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await controller.spawn({})
    const exits: unknown[] = []
    controller.on('exit', (e) => exits.push(e))
    expect(controller.kill(id)).toBe(true)
    await provider.settle()
    expect(exits).toEqual([])
    clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    await provider.settle()
    expect(exits).toEqual([
      expect.objectContaining({ ptyId: id, code: -1, cause: { kind: 'unknown', reason: 'stop_unverified' } }),
    ])
    expect(provider.livePtyIds()).toEqual([id])
    expect(controller.hasPty(id)).toBeNull()
  })

  it('4c. a kill -9 from outside while the stop is pending: scripted with diedBeforeStopRequest, it stays signaled(9)', async () => {
    // As the bundled providers report an outside SIGKILL that crossed their stop's hang-up; without
    // the field the fake's exit reads as the pending stop's own (an operator close).
    const { provider, controller, events } = setup()
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const killed = await controller.spawn({})
    const closed = await controller.spawn({})
    expect(controller.kill(killed.id)).toBe(true)
    expect(controller.kill(closed.id)).toBe(true)
    await provider.settle()
    provider.emitExit(killed.id, { exitCode: 0, signal: 9, diedBeforeStopRequest: true })
    provider.emitExit(closed.id, { exitCode: 0, signal: 9 })
    await provider.settle()
    expect(events).toEqual(['exit:0:{"kind":"signaled","signal":9}', 'exit:0:{"kind":"operator_close"}'])
    await controller.dispose()
  })

  it('4b. the same with vitest fake timers', async () => {
    vi.useFakeTimers()
    const { provider, controller } = setup()
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await controller.spawn({})
    const exits: unknown[] = []
    controller.on('exit', (e) => exits.push(e))
    expect(controller.kill(id)).toBe(true)
    await vi.advanceTimersByTimeAsync(STOP_UNCONFIRMED_AFTER_MS)
    expect(exits).toEqual([
      expect.objectContaining({ ptyId: id, code: -1, cause: { kind: 'unknown', reason: 'stop_unverified' } }),
    ])
    expect(controller.hasPty(id)).toBeNull()
  })

  it('5. a flood while the producer is paused', async () => {
    const { provider, controller, events } = setup()
    const { id } = await controller.spawn({})
    provider.pauseProducer(id)
    for (let i = 0; i < 400; i += 1) provider.emitData(id, 'x'.repeat(200))
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.getPty(id)?.heldEventCount).toBe(401)
    expect(events).toEqual([])
    provider.resumeProducer(id)
    await provider.settle()
    expect(provider.calls.map((c) => c.method)).toContain('resumeProducer')
    expect(events).toHaveLength(401)
    expect(events.at(-1)).toMatch(/^exit:0:/)
    await controller.dispose()
  })

  it('5b. the controller pauses a flood above the high watermark and resumes it after acks', async () => {
    const { provider, controller, events } = setup()
    const { id } = await controller.spawn({})
    controller.acknowledgeData(id, 0) // this consumer acknowledges: flow control engages
    const chunk = 'x'.repeat(1_000)
    const chunks = Math.ceil(FLOW_CONTROL_HIGH_WATERMARK_CHARS / chunk.length) + 50
    for (let i = 0; i < chunks; i += 1) provider.emitData(id, chunk)
    expect(provider.getPty(id)?.paused).toBe(true)
    const deliveredWhilePaused = events.length
    expect(deliveredWhilePaused).toBeLessThan(chunks)
    controller.acknowledgeData(id, deliveredWhilePaused * chunk.length)
    expect(provider.getPty(id)?.paused).toBe(false)
    expect(events).toHaveLength(chunks)
    expect(provider.calls.map((c) => c.method).filter((m) => m.endsWith('Producer'))).toEqual(['pauseProducer', 'resumeProducer'])
    await controller.dispose()
  })

  it("7. the provider's detach()", async () => {
    const { provider, controller, events } = setup()
    const { id } = await controller.spawn({ file: 'bash' })
    await provider.detach()

    expect(controller.hasPty(id)).toBeNull() // the shell runs on, unseen
    expect(controller.write(id, 'ls\r', 'driving')).toBe(false)
    await expect(controller.listProcesses()).rejects.toMatchObject({
      code: 'listing_failed',
      cause: { code: 'provider_detached' },
    })
    expect(await controller.stopAndWait(id)).toBe(false) // refused: no exit will come
    expect(events).toEqual([`exit:-1:{"kind":"unknown","reason":"stop_unverified"}`])
    await controller.dispose({ stopPtys: false })
    expect(provider.livePtyIds()).toEqual([id]) // the fake stopped nothing
  })

  it('releases every provider listener when the controller is disposed', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    await controller.spawn({})
    expect(provider.listenerCount()).toBeGreaterThan(0)
    await controller.dispose()
    expect(provider.listenerCount()).toBe(0)
  })
})
