/**
 * Calls and verdicts that arrive late, found by a bug hunt from the host's side (2 Dec): a stop
 * that outlives its incarnation, and output that went by before the consumer began to acknowledge.
 */
import { describe, expect, it, vi } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createFakePtyProvider, fakeScriptMetadata } from 'ptykit/testing'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createClaimedOwnerRegistry, createInMemoryPtyRuntime, type ClaimedOwnerRegistry } from 'ptykit/spawn'
import type { PtyProvider } from 'ptykit/contracts'
import { withoutIncarnations } from '../support/without-incarnations.js'

type Fake = ReturnType<typeof createFakePtyProvider>

/** Let the fake provider and the manual clock run until no timer is left (or `rounds` passed). */
async function runDown(provider: ReturnType<typeof createFakePtyProvider>, clock: ReturnType<typeof createManualClock>, rounds = 50): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await provider.settle()
    const next = clock.nextTimerAt()
    if (next === null) return
    clock.advance(Math.max(0, next - clock.now()))
  }
}

describe('a stop that outlives its incarnation', () => {
  it('publishes no exit and no liveness for the incarnation replaced while it was being stopped', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const clock = createManualClock()
    const controller = createPtyController({ provider, clock })
    const events: { kind: string; incarnationId: string | undefined }[] = []
    controller.on('exit', (event) => events.push({ kind: 'exit', incarnationId: event.incarnationId }))
    controller.on('liveness', (event) => events.push({ kind: `liveness:${event.verdict.kind}`, incarnationId: event.incarnationId }))
    const first = await controller.spawn({ sessionId: 'x' })
    provider.setShutdownBehaviour('x', 'never_confirm')
    const stopping = controller.stopAndWait('x', { timeoutMs: 60_000 })
    await provider.settle()
    // Still live, still being stopped: nothing published about it yet but its spawn.
    expect(events.filter((event) => event.kind === 'exit')).toEqual([])
    events.length = 0
    // Respawned under the same id while the stop is still looking at the first process (a script's
    // own id replaces the live process; a caller's `sessionId` would be refused as in use).
    const second = await controller.spawn({ metadata: fakeScriptMetadata({ id: 'x' }) })
    expect(second.incarnationId).not.toBe(first.incarnationId)
    await runDown(provider, clock)
    await stopping
    // Events are addressed by id, which names the replacement now: nothing about the first.
    expect(events.filter((event) => event.incarnationId === first.incarnationId)).toEqual([])
    expect(controller.terminal('x')?.incarnationId).toBe(second.incarnationId)
    await controller.dispose()
  })
})

describe('spawnTerminal across a concurrent respawn of its id', () => {
  it('hands each caller the handle of the incarnation its own spawn published, the replaced one fenced', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider })
    const [first, second] = await Promise.all([
      controller.spawnTerminal({ sessionId: 'x' }),
      controller.spawnTerminal({ metadata: fakeScriptMetadata({ id: 'x' }) }),
    ])
    expect(first).not.toBe(second)
    expect(first.incarnationId).not.toBe(second.incarnationId)
    expect(controller.terminal('x')).toBe(second)
    // The first process was replaced: its handle refuses, and never reaches the second process.
    expect(first.write('to the first')).toBe(false)
    expect(await first.writeWithSettlement('to the first')).toEqual({ kind: 'refused', reason: 'stale_incarnation' })
    expect(second.write('to the second')).toBe(true)
    await controller.dispose()
  })
})

describe('a terminal revived after an unverified stop', () => {
  it.each(['attach', 'spawn'] as const)('reopens its handle’s output when revived through %s', async (via) => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const clock = createManualClock()
    const controller = createPtyController({ provider, clock })
    await controller.spawn({ sessionId: 'x' })
    const terminal = controller.terminal('x')!
    provider.setShutdownBehaviour('x', 'never_confirm')
    expect(controller.kill('x')).toBe(true)
    await provider.settle()
    // Past the window after which a stop with no exit is published as `stop_unverified`.
    clock.advance(60_000)
    await provider.settle()
    expect((await terminal.exited).cause).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
    // The host still holds it: a re-attach revives the same process.
    if (via === 'attach') expect(await controller.attach('x')).toBe(true)
    else await controller.spawn({ sessionId: 'x' })
    expect(controller.hasPty('x')).toBe(true)
    expect(controller.terminal('x')).toBe(terminal)
    const output = terminal.output()
    const pulled = output.next()
    provider.emitData('x', 'after revive')
    await provider.settle()
    expect(await Promise.race([pulled, new Promise((resolve) => setTimeout(() => resolve('nothing'), 50))])).toEqual({ done: false, value: 'after revive' })
    provider.setShutdownBehaviour('x', 'confirm')
    const disposed = controller.dispose()
    await runDown(provider, clock)
    await disposed
  })
})


/**
 * A host's own claim registry over the default one that holds back every ensure settling as
 * `disposition` until `release()`: it decides which of two joined spawns comes back first.
 */
function claimsHoldingBack(disposition: 'created' | 'adopted'): { claims: ClaimedOwnerRegistry; release: () => void } {
  const registry = createClaimedOwnerRegistry()
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const claims: ClaimedOwnerRegistry = {
    ...registry,
    ensure: async (args) => {
      const ensured = await registry.ensure(args)
      if (ensured.disposition === disposition) await released
      return ensured
    },
  }
  return { claims, release }
}

// A provider without incarnation ids cannot attest that the joiner's and the creator's replies name
// one process; the claim owner's generation does.
describe.each([
  { kind: 'a provider with incarnation ids', asProvider: (fake: Fake): PtyProvider => fake },
  { kind: 'a provider without incarnation ids', asProvider: withoutIncarnations },
])('two spawns that join one claim, over $kind', ({ asProvider }) => {
  it('share one record: a stop asked on the first spawn event is settled as an operator close', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider: asProvider(provider), claims: createClaimedOwnerRegistry() })
    const exits: { cause: unknown }[] = []
    controller.on('exit', (event) => exits.push(event))
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    let killed = false
    controller.on('spawn', (event) => {
      if (killed) return
      killed = true
      controller.kill(event.ptyId)
    })
    const claim = { key: 'agent-1' }
    const [a, b] = await Promise.all([controller.spawn({ claim }), controller.spawn({ claim })])
    expect(b.id).toBe(a.id)
    await provider.settle()
    // The process dies of the hang-up the stop sent.
    provider.emitExit(a.id, { exitCode: 0, signal: 1 })
    expect(exits).toEqual([expect.objectContaining({ cause: { kind: 'operator_close' } })])
  })

  it('announce the process once, as a start with its pid, whichever reply comes back first', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider: asProvider(provider), claims: createClaimedOwnerRegistry() })
    const spawns: unknown[] = []
    controller.on('spawn', (event) => spawns.push(event))
    provider.scriptNextSpawn({ pid: 4242 })
    const claim = { key: 'agent-1' }
    const [creator, joiner] = await Promise.all([controller.spawn({ claim }), controller.spawn({ claim })])
    expect(joiner).toMatchObject({ id: creator.id, claimDisposition: 'adopted' })
    expect(creator).toMatchObject({ claimDisposition: 'created', isReattach: false, pid: 4242 })
    expect(spawns).toEqual([expect.objectContaining({ ptyId: creator.id, isReattach: false, pid: 4242 })])
  })

  it('announce the process once when the creator publishes first and the joiner after', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    // The joiner's claim settles slowly (a host's own registry): the creator publishes first.
    const { claims, release: releaseJoiner } = claimsHoldingBack('adopted')
    const controller = createPtyController({ provider: asProvider(provider), claims })
    const spawns: unknown[] = []
    controller.on('spawn', (event) => spawns.push(event))
    provider.scriptNextSpawn({ pid: 77 })
    const claim = { key: 'agent-1' }
    const creator = controller.spawn({ claim })
    const joiner = controller.spawn({ claim })
    expect(await creator).toMatchObject({ claimDisposition: 'created', pid: 77 })
    releaseJoiner()
    expect(await joiner).toMatchObject({ claimDisposition: 'adopted', pid: 77 })
    expect(spawns).toEqual([expect.objectContaining({ isReattach: false, pid: 77 })])
  })

  it('deliver the output that came before the joiner started ahead of the output after it', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    // The creator's scope lease is released slowly (a host's own runtime): committed, its joiner
    // goes on and publishes the process while the creator still waits to return.
    const runtime = createInMemoryPtyRuntime()
    let releaseCreator!: () => void
    const creatorReleased = new Promise<void>((resolve) => (releaseCreator = resolve))
    let leases = 0
    const controller = createPtyController({
      provider: asProvider(provider),
      claims: createClaimedOwnerRegistry(),
      runtime: Object.assign(Object.create(runtime) as typeof runtime, {
        acquireScopeSpawn: (scopeId?: string) => {
          const release = runtime.acquireScopeSpawn(scopeId)
          if (++leases > 1 || typeof release !== 'function') return release
          return async () => {
            await creatorReleased
            release()
          }
        },
      }),
    })
    const output: string[] = []
    controller.on('data', (event) => output.push(event.data))
    const spawns: { isReattach: boolean }[] = []
    controller.on('spawn', (event) => spawns.push(event))
    provider.scriptNextSpawn({ hang: true })
    const claim = { key: 'agent-1' }
    const creator = controller.spawn({ claim })
    await vi.waitFor(() => expect(provider.pendingSpawnCount()).toBe(1))
    const [ptyId] = provider.livePtyIds()
    // It prints before the second caller arrives: held for the creator, still in flight.
    provider.emitData(ptyId!, 'first ')
    const joiner = controller.spawn({ claim })
    await new Promise((resolve) => setTimeout(resolve, 0))
    provider.releaseSpawn(ptyId)
    await joiner
    expect(spawns).toEqual([expect.objectContaining({ isReattach: false })])
    provider.emitData(ptyId!, 'second')
    releaseCreator()
    await creator
    expect(spawns).toHaveLength(1)
    expect(output.join('')).toBe('first second')
  })
})

describe('an output() iterator opened after some output went by', () => {
  it('owes nothing for what it was never handed: the producer runs while it keeps up', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider, clock: createManualClock() })
    const terminal = await controller.spawnTerminal({})
    await new Promise((resolve) => setTimeout(resolve, 0))
    // 150 000 chars nobody iterates yet (the view mounts a moment later): above the high watermark.
    for (let i = 0; i < 30; i++) provider.emitData(terminal.id, 'x'.repeat(5_000))
    const output = terminal.output()
    const pull = async (): Promise<unknown> => {
      const next = output.next()
      provider.emitData(terminal.id, 'y')
      return await Promise.race([next, new Promise((resolve) => setTimeout(() => resolve('stalled'), 50))])
    }
    expect(await pull()).toEqual({ done: false, value: 'y' })
    expect(await pull()).toEqual({ done: false, value: 'y' })
    expect(controller.getFlowControlState(terminal.id)).toMatchObject({ paused: false, engaged: true })
    expect(provider.getPty(terminal.id)?.paused).toBe(false)
  })
})
