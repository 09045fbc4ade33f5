import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PtyExitEvent, PtyLivenessVerdict } from '../../src/contracts/index.js'
import { isProvenProcessExit } from '../../src/exit-cause/index.js'
import { PTY_LIVENESS_REASONS, type PtyControllerExitEvent, PtyControllerDisposedError, STOP_UNCONFIRMED_AFTER_MS, createPtyController, isPtyControllerDisposedError, isPtyControllerError } from '../../src/controller/index.js'
import { EXITED_PTY_RECORDS_KEPT } from '../../src/controller/pty-record.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createClaimedOwnerRegistry, createInMemoryPtyRuntime, createInMemorySlotStore } from '../../src/spawn/index.js'
import { createHarness } from './controller-harness.js'

describe('error isolation', () => {
  it('reports a throwing listener on `error` and still runs the other listeners', async () => {
    const h = createHarness()
    const seen: string[] = []
    h.controller.on('data', () => {
      throw new Error('listener bug')
    })
    h.controller.on('data', (event) => seen.push(event.data))
    const { id } = await h.controller.spawn({})
    expect(() => h.provider.emitData(id, 'a')).not.toThrow()
    expect(seen).toEqual(['a'])
    const [error] = h.errors()
    expect(isPtyControllerError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'listener_threw', ptyId: id })
    expect((error?.cause as Error).message).toBe('listener bug')
  })

  it('never throws into the provider, even with no `error` listener and a throwing error listener', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider })
    controller.on('exit', () => {
      throw new Error('exit listener bug')
    })
    const { id } = await controller.spawn({})
    expect(() => provider.emitExit(id, { exitCode: 0 })).not.toThrow()
    const other = createPtyController({ provider: createFakePtyProvider({ scheduling: 'manual' }) })
    other.on('error', () => {
      throw new Error('error listener bug')
    })
    other.on('spawn', () => {
      throw new Error('spawn listener bug')
    })
    await expect(other.spawn({})).resolves.toMatchObject({ hostId: 'local' })
    await controller.dispose()
    await other.dispose()
  })

  it('runs `once` listeners once', async () => {
    const h = createHarness()
    const seen: string[] = []
    h.controller.once('data', (event) => seen.push(event.data))
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'a')
    h.provider.emitData(id, 'b')
    expect(seen).toEqual(['a'])
    expect(h.controller.listenerCount('data')).toBe(1)
  })
})

describe('construction with a provider that cannot take listeners', () => {
  it('throws a TypeError naming the host and the method, and leaves no listener on the providers it had subscribed to', () => {
    const healthy = createFakePtyProvider()
    const broken = Object.assign(createFakePtyProvider({ name: 'broken' }), {
      onExit: () => {
        throw new Error('no exits here')
      },
    })
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(() => createPtyController({ providers: { local: healthy, other: broken } })).toThrow(
        new TypeError('Expected the provider of host "other" ("broken") to take the controller\'s listeners, but its onExit threw Error: no exits here'),
      )
    }
    // Before: each failed construction left its listeners on the healthy provider (6 after 3).
    expect(healthy.listenerCount()).toBe(0)
    const silent = Object.assign(createFakePtyProvider({ name: 'silent' }), { onData: () => undefined })
    expect(() => createPtyController({ providers: { local: healthy, other: silent } })).toThrow(/its onData returned undefined \(undefined\), not an unsubscribe function/)
    expect(healthy.listenerCount()).toBe(0)
  })

  it('takes a disposable ({ dispose() }) for an unsubscribe, and disposes it at dispose', async () => {
    const provider = createFakePtyProvider()
    const onData = provider.onData.bind(provider)
    const vscodeStyle = Object.assign(provider, { onData: (listener: Parameters<typeof onData>[0]) => ({ dispose: onData(listener) }) })
    const controller = createPtyController({ provider: vscodeStyle })
    expect(provider.listenerCount()).toBeGreaterThan(0)
    await controller.dispose()
    expect(provider.listenerCount()).toBe(0)
  })
})

describe('dispose', () => {
  it('stops every PTY as an operator close, unsubscribes, drops listeners, and is idempotent', async () => {
    const h = createHarness()
    const a = await h.controller.spawn({})
    const b = await h.controller.spawn({})
    const done = h.controller.dispose()
    expect(h.controller.dispose()).toBe(done)
    await h.run(done)
    expect(h.exits().map((exit) => [exit.ptyId, exit.cause.kind]).sort()).toEqual(
      [
        [a.id, 'operator_close'],
        [b.id, 'operator_close'],
      ].sort(),
    )
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.provider.listenerCount()).toBe(0)
    expect(h.controller.listenerCount('exit')).toBe(0)
    expect(h.clock.pendingTimerCount()).toBe(0)
    expect(h.controller.disposed).toBe(true)
  })

  it('publishes stop_unverified for a PTY whose stop is never confirmed, bounded by the deadline', async () => {
    const h = createHarness({ controller: { stop: { defaultDeadlineMs: 2_000 } } })
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    await h.run(h.controller.dispose())
    // Forced at half the budget (within the deadline), still listed afterwards: given up, never past the deadline.
    expect(h.clock.now()).toBe(1_000)
    expect(h.exits()).toEqual([expect.objectContaining({ ptyId: id, code: -1, cause: { kind: 'unknown', reason: 'stop_unverified' } })])
  })

  it('after dispose: only the calls that start or bind a PTY reject; every late call is a harmless answer', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.controller.acknowledgeData(id, 0)
    let serializerCalls = 0
    h.controller.registerRendererSerializer(id, () => {
      serializerCalls += 1
      return { data: 'screen', cols: 80, rows: 24 }
    })
    const generation = h.controller.getRendererSerializerGeneration(id)
    await h.run(h.controller.dispose())
    const providerCallsBefore = h.provider.calls.length
    await expect(h.controller.spawn({})).rejects.toMatchObject({ code: 'controller_disposed', method: 'spawn' })
    // Refused before it subscribes anything: dispose removed every listener, and none comes back.
    await expect(h.controller.spawnTerminal({})).rejects.toMatchObject({ code: 'controller_disposed', method: 'spawnTerminal' })
    expect(h.controller.eventNames()).toEqual([])
    await expect(h.controller.attach(id)).rejects.toSatisfy(isPtyControllerDisposedError)
    expect(() => h.controller.claimSlotCreate({ key: 'pane' })).toThrow(PtyControllerDisposedError)
    await expect(h.controller.adoptSlot({ slot: { key: 'pane' } })).rejects.toMatchObject({ code: 'controller_disposed', method: 'adoptSlot' })
    // The seed's foreground, input-mode and renderer members arrive late from views too.
    await expect(h.controller.supportsForegroundProcessEvidence()).resolves.toBe(false)
    expect(h.controller.getRendererSerializerGeneration(id)).toBe(generation)
    const lateRegistration = h.controller.registerRendererSerializer(id, () => ({ data: 'late', cols: 1, rows: 1 }))
    expect(h.controller.hasRendererSerializer(id)).toBe(false)
    expect(lateRegistration.dispose()).toBeUndefined()
    await expect(h.controller.waitForRendererSerializer(id, 0, 1_000)).resolves.toBe(false)
    // Late calls from async callbacks (an ack from a renderer's write callback) never throw.
    for (const ptyId of [id, 'never-seen']) {
      expect(h.controller.acknowledgeData(ptyId, 1)).toBeUndefined()
      expect(h.controller.write(ptyId, 'x', 'driving')).toBe(false)
      expect(h.controller.writeWithSettlement(ptyId, 'x', 'driving')).toEqual({ kind: 'refused', reason: 'controller_disposed' })
      expect(h.controller.resize(ptyId, 10, 10)).toBe(false)
      expect(h.controller.kill(ptyId)).toBe(false)
      // Disposal's verdict: `id`'s stop was verified (before: `false` for it too); nobody asks hosts about an unknown id any more.
      await expect(h.controller.stopAndWait(ptyId)).resolves.toBe(ptyId === id)
      expect(h.controller.retireRejectedPty(ptyId, true, undefined)).toBeUndefined()
      expect(h.controller.hasPty(ptyId)).toBeNull()
      await expect(h.controller.probePtyLiveness(ptyId)).resolves.toBeNull()
      expect(h.controller.getSize(ptyId)).toBeNull()
      expect(h.controller.getFlowControlState(ptyId)).toBeNull()
      await expect(h.controller.getCwd(ptyId)).resolves.toBeNull()
      await expect(h.controller.getForegroundProcess(ptyId)).resolves.toBeNull()
      await expect(h.controller.hasChildProcesses(ptyId)).resolves.toBeNull()
      await expect(h.controller.inspectProcess(ptyId)).resolves.toMatchObject({ unavailable: true })
      await expect(h.controller.clearBuffer(ptyId)).resolves.toBeUndefined()
      await expect(h.controller.serializeProviderBuffer(ptyId)).resolves.toBeNull()
      await expect(h.controller.serializeBuffer(ptyId)).resolves.toBeNull()
      await expect(h.controller.confirmForegroundProcess(ptyId)).resolves.toBeNull()
      await expect(h.controller.confirmShellForeground(ptyId)).resolves.toBe(false)
      await expect(h.controller.resetInputModes(ptyId)).resolves.toBeUndefined()
    }
    expect(serializerCalls).toBe(0)
    await expect(h.controller.listProcessesWithHostScope()).resolves.toEqual({ processes: [], hostIds: [] })
    await expect(h.controller.listProcesses()).resolves.toEqual([])
    await expect(h.controller.listProcesses('local')).rejects.toMatchObject({ code: 'listing_failed' })
    expect(h.controller.inventory()).toMatchObject({ allLivePtyIds: new Set(), queriedHostIds: new Set() })
    // Nothing reached the provider, and nothing was reported.
    expect(h.provider.calls.length).toBe(providerCallsBefore)
    expect(h.errors()).toEqual([])
    await expect(h.controller.dispose()).resolves.toBeUndefined()
  })

  it('after dispose, malformed arguments are still TypeErrors naming the argument', async () => {
    const h = createHarness()
    await h.run(h.controller.dispose())
    expect(() => h.controller.kill(123 as unknown as string)).toThrow('Expected the `ptyId` argument to be a non-empty string, got 123 (number)')
    expect(() => h.controller.acknowledgeData('a', -1)).toThrow('`chars` argument')
    await expect(h.controller.stopAndWait('a', 'fast' as never)).rejects.toThrow('`options` argument')
    await expect(h.controller.waitForRendererSerializer('a', -1)).rejects.toThrow('`afterGeneration` argument')
    await expect(h.controller.waitForRendererSerializer('a', 0, Number.NaN)).rejects.toThrow('`timeoutMs` argument')
    expect(() => h.controller.registerRendererSerializer('a', 42 as never)).toThrow('Expected the `serializer` argument to be a function, got 42 (number)')
  })

  it('stops a PTY whose spawn was in flight when the controller was disposed', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ hang: true, id: 'late' })
    const spawning = h.controller.spawn({})
    await h.settle()
    await h.run(h.controller.dispose())
    h.provider.releaseSpawn('late')
    await expect(spawning).rejects.toBeInstanceOf(PtyControllerDisposedError)
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
  })

  it('releases the claim and the slot binding of a spawn that completes after dispose', async () => {
    const claims = createClaimedOwnerRegistry()
    const store = createInMemorySlotStore()
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { claims, store, runtime } })
    h.provider.scriptNextSpawn({ hang: true, id: 'claimed' })
    const claimed = h.controller.spawn({ claim: { key: 'agent' } })
    h.provider.scriptNextSpawn({ hang: true, id: 'slotted' })
    const slotted = h.controller.spawn({ slot: { key: 'pane' } })
    await h.settle()
    await h.run(h.controller.dispose())
    h.provider.releaseSpawn('claimed')
    h.provider.releaseSpawn('slotted')
    await expect(claimed).rejects.toBeInstanceOf(PtyControllerDisposedError)
    await expect(slotted).rejects.toBeInstanceOf(PtyControllerDisposedError)
    await h.settle()
    expect(h.provider.livePtyIds()).toEqual([])
    expect(claims.owners()).toEqual([])
    expect(store.getLiveOwner({ key: 'pane' })).toBeNull()
    expect(runtime.inspect().registeredPtys).toEqual([])
    expect(runtime.inspect().executionContexts).toEqual([])
  })

  it('refuses an adoptSlot that waited behind a slot create claim when the controller was disposed, as a spawn', async () => {
    const h = createHarness()
    const slot = { key: 'pane' }
    await h.controller.spawn({ slot })
    const release = h.controller.claimSlotCreate(slot)
    const adoption = h.controller.adoptSlot({ slot })
    const spawn = h.controller.spawn({ slot })
    await h.settle()
    await h.run(h.controller.dispose())
    release()
    // Before: the adoption answered null, "the slot has no owner", though it had a live one.
    await expect(adoption).rejects.toMatchObject({ code: 'controller_disposed', method: 'adoptSlot', message: 'The PTY controller was disposed while `adoptSlot` was in flight' })
    // Called before dispose: the message says it was overtaken (before: "Cannot call `spawn` on a disposed PTY controller").
    await expect(spawn).rejects.toMatchObject({ code: 'controller_disposed', method: 'spawn', message: 'The PTY controller was disposed while `spawn` was in flight' })
  })

  it('settles a caller\'s stopAndWait and listing that were still waiting when dispose finished', async () => {
    const h = createHarness({ controller: { stop: { defaultDeadlineMs: 2_000 } } })
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    const stopping = h.controller.stopAndWait(id, { timeoutMs: 60_000 })
    const hungListing = new Promise<never>(() => undefined)
    h.provider.listProcesses = () => hungListing
    const listing = h.controller.listProcesses(undefined, { timeoutMs: 60_000 })
    await h.run(h.controller.dispose())
    // Dispose forces at half its budget; the verifying listing hangs until its deadline.
    expect(h.clock.now()).toBe(2_000)
    // Neither waits for its own (cancelled) timers: both give up at once.
    await expect(h.run(stopping, 0)).resolves.toBe(false)
    // The local host never answered: the listing rejects (seed rule 11.3) rather than hang, and
    // says dispose cut it short (its 60 s had not run out).
    await expect(h.run(listing, 0)).rejects.toMatchObject({ code: 'listing_failed', message: expect.stringContaining('before the PTY controller was disposed') })
  })

  it('dispose({ stopPtys: false }) leaves a PTY being stopped as it is: a stopAndWait in its hang-up gives up, never forces', async () => {
    const h = createHarness({ controller: { stop: { defaultDeadlineMs: 10_000, forceAfterMs: 3_000 } } })
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    const stopping = h.controller.stopAndWait(id, { timeoutMs: 10_000 })
    await h.settle()
    expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toHaveLength(1)
    await h.controller.dispose({ stopPtys: false })
    await expect(h.run(stopping, 0)).resolves.toBe(false)
    await h.settle()
    // Only the hang-up went out; no `shutdown({ immediate: true })` after dispose, no timer left.
    expect(h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => call.args[1])).toEqual([expect.not.objectContaining({ immediate: true })])
    expect(h.clock.pendingTimerCount()).toBe(0)
    expect(h.provider.livePtyIds()).toEqual([id])
  })

  it("releases a caller's question that the provider never answers (liveness, cwd, foreground, inspection) when dispose finishes", async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const never = (): Promise<never> => new Promise<never>(() => undefined)
    Object.assign(h.provider, { probeLiveness: never, getCwd: never, getForegroundProcess: never, hasChildProcesses: never, getBufferSnapshot: never })
    const questions = [
      h.controller.probePtyLiveness(id),
      h.controller.probePtyLiveness('unknown-id'),
      h.controller.getCwd(id),
      h.controller.getForegroundProcess(id),
      h.controller.inspectProcess(id, { scanChildProcesses: true }),
      h.controller.serializeProviderBuffer(id),
    ]
    await h.run(h.controller.dispose({ stopPtys: false }))
    // Before: each stayed pending for good, though dispose says waiting calls give up.
    await expect(h.run(Promise.all(questions), 0)).resolves.toEqual([null, null, null, null, { foregroundProcess: null, hasChildProcesses: null }, null])
  })

  it('with stopPtys: false, leaves every PTY running and lets go of it silently: no stop, no exit, no error; handles\' output ends', async () => {
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { runtime } })
    const a = await h.controller.spawn({})
    const terminal = await h.controller.spawnTerminal({})
    // Paused by flow control: letting go resumes it (nobody is left to acknowledge).
    h.controller.acknowledgeData(a.id, 0)
    h.provider.emitData(a.id, 'x'.repeat(200_000))
    expect(h.controller.getFlowControlState(a.id)).toMatchObject({ paused: true })
    const iterator = terminal.output()[Symbol.asyncIterator]()
    const pending = iterator.next()
    const callsBefore = h.provider.calls.filter((call) => call.method === 'shutdown').length
    await h.run(h.controller.dispose({ stopPtys: false }))
    expect(h.provider.livePtyIds().sort()).toEqual([a.id, terminal.id].sort())
    expect(h.provider.calls.filter((call) => call.method === 'shutdown').length).toBe(callsBefore)
    // Both resumed: `a` was paused; the terminal's iterator engaged flow control (a provider that
    // counts acknowledgements itself must stop counting: nobody acknowledges any more).
    const resumed = h.provider.calls.slice(-2).map((call) => [call.method, ...call.args])
    expect(resumed.sort()).toEqual([['resumeProducer', a.id], ['resumeProducer', terminal.id]].sort())
    expect(h.exits()).toEqual([])
    expect(h.errors()).toEqual([])
    await expect(pending).resolves.toEqual({ done: true, value: undefined })
    // The processes run on: the runtime keeps them registered; no timer, no subscription is left.
    expect(runtime.inspect().registeredPtys.map((row) => row.ptyId).sort()).toEqual([a.id, terminal.id].sort())
    expect(h.provider.listenerCount()).toBe(0)
    expect(h.clock.pendingTimerCount()).toBe(0)
    expect(h.controller.disposed).toBe(true)
    // Later output and exits reach nobody; a second dispose is the same one (the first call decides).
    h.provider.emitExit(a.id, { exitCode: 0 })
    expect(h.exits()).toEqual([])
    await expect(h.controller.dispose()).resolves.toBeUndefined()
    expect(h.provider.livePtyIds()).toEqual([terminal.id])
  })

  it('rejects malformed dispose options with a TypeError naming them, and disposes nothing', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    await expect(h.controller.dispose({ stopPtys: 'no' } as never)).rejects.toThrow('Expected the `stopPtys` option to be a boolean, got "no" (string)')
    await expect(h.controller.dispose(false as never)).rejects.toThrow('Expected the `options` argument to be an object, got false (boolean)')
    expect(h.controller.disposed).toBe(false)
    expect(h.controller.write(id, 'still here', 'driving')).toBe(true)
    await h.run(h.controller.dispose({}))
    expect(h.exits()).toEqual([expect.objectContaining({ ptyId: id, cause: { kind: 'operator_close' } })])
  })

  it('supports `await using` through Symbol.asyncDispose', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    {
      await using controller = createPtyController({ provider })
      await controller.spawn({})
    }
    expect(provider.livePtyIds()).toEqual([])
    expect(provider.listenerCount()).toBe(0)
  })
})

describe('malformed provider exits', () => {
  it('publishes a numeric code and an unknown cause for an exit whose code is not an integer', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    const exitListeners: ((event: PtyExitEvent) => void)[] = []
    const provider = { ...fake, onExit: (listener: (event: PtyExitEvent) => void) => (exitListeners.push(listener), fake.onExit(listener)) }
    const controller = createPtyController({ provider })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const a = await controller.spawn({})
    const b = await controller.spawn({})
    for (const listener of exitListeners) listener({ id: a.id, incarnationId: a.incarnationId!, code: 'x' as never })
    for (const listener of exitListeners) listener({ id: b.id, incarnationId: b.incarnationId!, code: Number.NaN })
    expect(exits).toEqual([
      { ptyId: a.id, hostId: 'local', incarnationId: a.incarnationId, code: -1, cause: { kind: 'unknown', reason: 'cause_unreported' } },
      { ptyId: b.id, hostId: 'local', incarnationId: b.incarnationId, code: -1, cause: { kind: 'unknown', reason: 'cause_unreported' } },
    ])
    // The seed: a reader missing a status defaults to -1, never 0 (0 would read as a clean finish).
    expect(exits.map((exit) => isProvenProcessExit(exit.code))).toEqual([false, false])
    await controller.dispose()
  })

  it.each([Number.NaN, 1.5, -1.5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'a synthetic exit with the malformed code %s proves no death: liveness unverifiable, hasPty null',
    async (code) => {
      const fake = createFakePtyProvider({ scheduling: 'manual' })
      const exitListeners: ((event: PtyExitEvent) => void)[] = []
      const provider = { ...fake, onExit: (listener: (event: PtyExitEvent) => void) => (exitListeners.push(listener), fake.onExit(listener)) }
      const controller = createPtyController({ provider })
      const verdicts: PtyLivenessVerdict[] = []
      controller.on('liveness', (event) => verdicts.push(event.verdict))
      const { id, incarnationId } = await controller.spawn({})
      for (const listener of exitListeners) listener({ id, incarnationId: incarnationId!, code, observed: 'synthetic' })
      expect(verdicts.at(-1)).toEqual({ kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.exitUnconfirmed })
      expect(controller.hasPty(id)).toBeNull()
      await controller.dispose({ stopPtys: false })
    },
  )
})

describe('default clock', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('follows fake timers installed after the controller was created', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider })
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await controller.spawn({})
    const causes: string[] = []
    controller.on('exit', (event) => causes.push(event.cause.kind))
    vi.useFakeTimers()
    controller.kill(id)
    vi.advanceTimersByTime(STOP_UNCONFIRMED_AFTER_MS)
    expect(causes).toEqual(['unknown'])
  })
})

describe('memory bounds', () => {
  it(`forgets the oldest exited PTYs past EXITED_PTY_RECORDS_KEPT, and remembers the recent ones`, async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let index = 0; index <= EXITED_PTY_RECORDS_KEPT; index++) {
      const { id } = await h.controller.spawn({})
      h.provider.emitExit(id, { exitCode: 0 })
      ids.push(id)
    }
    const live = await h.controller.spawn({})
    // The oldest exited PTY is forgotten: it answers as an unknown id.
    expect(h.controller.writeWithSettlement(ids[0] ?? '', 'x', 'driving')).toEqual({ kind: 'refused', reason: 'pty_not_found' })
    // The recent ones, and every live one, are still known.
    expect(h.controller.writeWithSettlement(ids[1] ?? '', 'x', 'driving')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(h.controller.writeWithSettlement(ids.at(-1) ?? '', 'x', 'driving')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(h.controller.hasPty(ids.at(-1) ?? '')).toBe(false)
    expect(h.controller.write(live.id, 'x', 'driving')).toBe(true)
  })
})
