import { describe, expect, it } from 'vitest'
import { toPtyIncarnationId, type PtyProcessInfo, type PtyProvider } from '../../src/contracts/index.js'
import { PTY_LIVENESS_REASONS, STOP_UNCONFIRMED_AFTER_MS, createPtyController } from '../../src/controller/index.js'
import { STOP_FORCE_AFTER_MS } from '../../src/controller/stop-constants.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createHarness } from './controller-harness.js'

function shutdownCalls(h: ReturnType<typeof createHarness>): unknown[][] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => [...call.args])
}

describe('kill', () => {
  it('returns false for an unknown id and for an exited PTY, and dispatches nothing', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 0 })
    expect(h.controller.kill('nope')).toBe(false)
    expect(h.controller.kill(id)).toBe(false)
    expect(shutdownCalls(h)).toEqual([])
  })

  it('fences the shutdown by the current incarnation', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.controller.spawn({})
    h.controller.kill(id)
    expect(shutdownCalls(h)).toEqual([[id, { expectedIncarnationId: incarnationId }]])
  })

  it('marks the stop before dispatching, so a provider that reports the exit synchronously is an operator close', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const order: string[] = []
    h.controller.on('exit', (event) => order.push(`exit:${event.cause.kind}`))
    h.controller.kill(id)
    // The fake emits the exit inside shutdown(): it was already settled when kill returned.
    expect(order).toEqual(['exit:operator_close'])
  })

  it('does not publish stop_unverified when the exit arrives inside the unconfirmed window', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS - 1)
    h.provider.emitExit(id, { exitCode: 0, signal: 1 })
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
    expect(h.clock.pendingTimerCount()).toBe(0)
  })

  it('honours the stop.unconfirmedAfterMs option', async () => {
    const h = createHarness({ controller: { stop: { unconfirmedAfterMs: 250 } } })
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    h.clock.advance(249)
    expect(h.exits()).toEqual([])
    h.clock.advance(1)
    expect(h.exits().map((exit) => exit.code)).toEqual([-1])
  })
})

describe('stopAndWait', () => {
  it('is true after a confirmed hang-up verified by the listing, with no forced stop', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id))).resolves.toBe(true)
    // The provider gets the time left as a duration: its clock need not be the controller's.
    expect(shutdownCalls(h)).toEqual([[id, { expectedIncarnationId: incarnationId, timeoutMs: 10_000 }]])
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
    expect(h.clock.now()).toBe(0)
  })

  it('forces after STOP_FORCE_AFTER_MS and is false when the process never goes away', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id))).resolves.toBe(false)
    const calls = shutdownCalls(h)
    expect(calls).toHaveLength(2)
    expect(calls[0]?.[1]).not.toHaveProperty('immediate')
    expect(calls[1]?.[1]).toMatchObject({ immediate: true })
    expect(h.clock.now()).toBe(STOP_FORCE_AFTER_MS)
    // Still listed: it stays live — no liveness event, as nothing known changed — and no exit claimed.
    expect(h.liveness()).toEqual([])
    expect(h.controller.hasPty(id)).toBe(true)
    expect(h.exits()).toEqual([])
    // The stop was requested and never confirmed: unverified when the window ends.
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS - STOP_FORCE_AFTER_MS)
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
  })

  it.each([
    ['rows that are not objects', [null, 5, 'x']],
    ['a row whose id is not a string', [{ id: 5, incarnationId: 'x' }]],
    ['a row whose incarnationId is null (a JSON relay)', 'NULL_INCARNATION'],
    ['a row whose incarnationId is a number', 'NUMERIC_INCARNATION'],
  ])('is false when the listing has %s: a row it cannot read proves no absence', async (_name, rows) => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    const listing =
      rows === 'NULL_INCARNATION' ? [{ id, incarnationId: null }] : rows === 'NUMERIC_INCARNATION' ? [{ id, incarnationId: 42 }] : (rows as unknown[])
    h.provider.listProcesses = async () => listing as never
    // Before: the stopped PTY was not among the rows it could read, so it counted as gone —
    // verified, operator_close — while the process still ran.
    await expect(h.run(h.controller.stopAndWait(id))).resolves.toBe(false)
    expect(h.exits().map((exit) => exit.cause)).not.toContainEqual({ kind: 'operator_close' })
    expect(h.errors().map((error) => `${error.message}: ${String((error.cause as Error | undefined)?.message)}`).join('\n')).toMatch(/of the listing|in the listing/)
    await expect(h.controller.listProcesses()).rejects.toMatchObject({ code: 'listing_failed', message: expect.stringMatching(/malformed listing/) })
  })

  it('is true when the forced stop lands', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    const pending = h.controller.stopAndWait(id)
    await h.settle()
    h.provider.setShutdownBehaviour(id, 'confirm')
    await expect(h.run(pending)).resolves.toBe(true)
    expect(h.exits()).toEqual([expect.objectContaining({ cause: { kind: 'operator_close' }, code: 0 })])
  })

  it('forces within a deadline shorter than the force delay (at half the time left), and is false when the process stays', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id, { timeoutMs: 100 }))).resolves.toBe(false)
    expect(h.clock.now()).toBe(50)
    expect(shutdownCalls(h).map((call) => call[1])).toEqual([
      expect.not.objectContaining({ immediate: true }),
      expect.objectContaining({ immediate: true, timeoutMs: 50 }),
    ])
  })

  it('escalates at once when the hang-up is rejected, and publishes stop_unverified when both stops fail', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id))).resolves.toBe(false)
    expect(shutdownCalls(h)).toHaveLength(2)
    expect(h.clock.now()).toBe(0)
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.shutdownFailed })
  })

  it('is false, and liveness unverifiable, when the listing that should verify the stop fails', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    h.provider.setListingFailure(new Error('host unreachable'))
    await expect(h.run(h.controller.stopAndWait(id))).resolves.toBe(false)
    expect(h.liveness().map((event) => event.verdict)).toContainEqual({
      kind: 'unverifiable',
      reason: PTY_LIVENESS_REASONS.verificationFailed,
    })
    expect(h.errors().map((error) => error.code)).toContain('listing_failed')
  })

  it('publishes the exit itself (code 0, operator_close) when the listing proves absence without a provider exit', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    let stopped = false
    const provider: PtyProvider = {
      name: 'quiet',
      authoritativeListings: true,
      spawn: (options) => fake.spawn(options),
      write: (id, data) => fake.write(id, data),
      resize: (id, cols, rows) => fake.resize(id, cols, rows),
      shutdown: async () => {
        stopped = true
      },
      listProcesses: async (): Promise<PtyProcessInfo[]> => (stopped ? [] : fake.listProcesses()),
      onData: (listener) => fake.onData(listener),
      onExit: (listener) => fake.onExit(listener),
    }
    const clock = createManualClock()
    const controller = createPtyController({ provider, clock })
    const exits: unknown[] = []
    controller.on('exit', (event) => exits.push(event))
    const { id, incarnationId } = await controller.spawn({})
    await expect(controller.stopAndWait(id)).resolves.toBe(true)
    expect(exits).toEqual([{ ptyId: id, hostId: 'local', incarnationId, code: 0, cause: { kind: 'operator_close' } }])
    expect(controller.hasPty(id)).toBe(false)
  })

  it('never verifies through a listing row of the same incarnation, and ignores a replacement row', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    let rows: PtyProcessInfo[] = []
    const provider: PtyProvider = {
      name: 'lister',
      authoritativeListings: true,
      spawn: (options) => fake.spawn(options),
      write: (id, data) => fake.write(id, data),
      resize: (id, cols, rows) => fake.resize(id, cols, rows),
      shutdown: async () => undefined,
      listProcesses: async () => rows,
      onData: (listener) => fake.onData(listener),
      onExit: (listener) => fake.onExit(listener),
    }
    const clock = createManualClock()
    const controller = createPtyController({ provider, clock })
    const { id, incarnationId } = await controller.spawn({})
    rows = [{ id, hostId: 'local', cwd: null, title: 'sh', ...(incarnationId === undefined ? {} : { incarnationId }) }]
    const stillListed = controller.stopAndWait(id, { timeoutMs: 1_000 })
    await new Promise((resolve) => setImmediate(resolve))
    clock.advance(1_000)
    await expect(stillListed).resolves.toBe(false)
    rows = [{ id, hostId: 'local', cwd: null, title: 'sh', incarnationId: toPtyIncarnationId('someone-else') }]
    await expect(controller.stopAndWait(id)).resolves.toBe(true)
  })

  it('is true for an already exited PTY', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 4 })
    await expect(h.controller.stopAndWait(id)).resolves.toBe(true)
  })

  it('accepts a provider exit as the evidence when the provider can neither list nor probe authoritatively', async () => {
    const h = createHarness({ provider: { authoritativeListings: false } })
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id))).resolves.toBe(true)
  })

  it('is false without evidence from a provider that can neither list nor probe and never reports an exit', async () => {
    const h = createHarness({ provider: { authoritativeListings: false } })
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm', liveness: null })
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id))).resolves.toBe(false)
  })

  it('rejects a malformed deadline with a TypeError naming it', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    await expect(h.controller.stopAndWait(id, { deadlineMs: Number.POSITIVE_INFINITY })).rejects.toThrow(
      'Expected the `deadlineMs` option to be a finite absolute epoch time in milliseconds',
    )
    await expect(h.controller.stopAndWait(id, { timeoutMs: -1 })).rejects.toThrow('`timeoutMs` option')
    await expect(h.controller.stopAndWait(id, { deadlineMs: 1, timeoutMs: 1 })).rejects.toThrow(TypeError)
    await expect(h.controller.stopAndWait(id, { signal: 'stop' as never })).rejects.toThrow('Expected the `signal` option to be an AbortSignal')
  })
})

describe('retireRejectedPty', () => {
  it('settles a confirmed retirement as an operator close', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id, incarnationId } = await h.controller.spawn({})
    h.controller.retireRejectedPty(id, true, incarnationId)
    expect(h.exits()).toEqual([{ ptyId: id, hostId: 'local', incarnationId, code: 0, cause: { kind: 'operator_close' } }])
    expect(h.controller.hasPty(id)).toBe(false)
  })

  it('publishes stop_unverified for an unconfirmed retirement', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.controller.spawn({})
    h.controller.retireRejectedPty(id, false, incarnationId)
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.retireUnconfirmed })
  })

  it.each([true, false])('of a paused PTY whose exit is held behind its output (stop confirmed: %s) publishes one exit, after that output', async (stopConfirmed) => {
    const h = createHarness({ controller: { flowControl: { mode: 'always', highWatermarkChars: 5, lowWatermarkChars: 2 } } })
    const { id, incarnationId } = await h.controller.spawn({})
    h.provider.emitData(id, 'abcdefghij')
    expect(h.controller.getFlowControlState(id)?.paused).toBe(true)
    // Held by the paused provider, the exit behind the output.
    h.provider.emitData(id, '[held]')
    h.provider.emitExit(id, { exitCode: 3 })
    h.controller.retireRejectedPty(id, stopConfirmed, incarnationId)
    await h.settle()
    // Before: the retirement's release handed over the held exit (published), then published its own.
    const ofPty = h.events.flatMap((entry) => (entry.type === 'data' && entry.event.ptyId === id ? [entry.event.data] : entry.type === 'exit' && entry.event.ptyId === id ? ['exit'] : []))
    expect(ofPty).toEqual(['abcdefghij', '[held]', 'exit'])
    expect(h.exits()).toHaveLength(1)
    expect(h.controller.hasPty(id)).toBe(false)
  })

  it('confirmed, of a paused PTY whose provider held a synthetic exit (death unproven) behind its output: one exit, and the death is proven', async () => {
    const h = createHarness({ controller: { flowControl: { mode: 'always', highWatermarkChars: 5, lowWatermarkChars: 2 } } })
    const { id, incarnationId } = await h.controller.spawn({})
    h.provider.emitData(id, 'abcdefghij')
    h.provider.emitData(id, '[held]')
    h.provider.emitExit(id, { exitCode: -1, observed: 'synthetic' })
    h.controller.retireRejectedPty(id, true, incarnationId)
    await h.settle()
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    // The retirement's confirmed stop proves the death the held exit could not.
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable', 'exited'])
    expect(h.controller.hasPty(id)).toBe(false)
  })

  it('leaves a same-id respawn alone', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'slot' })
    const first = await h.controller.spawn({})
    h.provider.emitExit('slot', { exitCode: 0 })
    h.provider.scriptNextSpawn({ id: 'slot' })
    await h.controller.spawn({})
    const before = h.events.length
    h.controller.retireRejectedPty('slot', true, first.incarnationId)
    expect(h.events.length).toBe(before)
    expect(h.controller.hasPty('slot')).toBe(true)
  })
})
