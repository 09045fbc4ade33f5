// Stage 5 reads the runtime's `getPtyOutputSequence(expectedId)` before the provider is called, and
// stage 11 hands it back to `synchronizePtyOutputSequenceFromProvider` as `sequenceBeforeSpawn`. An
// answer that is no sequence ("x", NaN, -1…) was taken unchecked: the rebase placed the
// provider's count on it (`"x" + 5`), or silently refused it. It now refuses the spawn before
// anything is forked — `registration_refused`, the code of every pre-spawn runtime hook's failure,
// naming the hook, the PTY and the answer — and the runtime holds nothing afterwards.
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import type { PtySpawnOptions } from '../../src/contracts/index.js'
import { createInMemoryPtyRuntime, isPtySpawnError, type InMemoryPtyRuntime, type PtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createHarness, rejectionOf, type Harness } from './harness.js'

const MALFORMED: readonly unknown[] = ['x', Number.NaN, -1, Number.POSITIVE_INFINITY, { sequence: 3 }, '5', true]

const label = (answer: unknown): string => (typeof answer === 'object' && answer !== null ? JSON.stringify(answer) : typeof answer === 'string' ? JSON.stringify(answer) : String(answer))

/** The runtime holds no lease, admitted handle, pending or registered PTY, sequence or context (as spawn-chaos checks). */
function expectRuntimeHoldsNothing(runtime: InMemoryPtyRuntime): void {
  const snapshot = runtime.inspect()
  expect(snapshot.heldLeases).toEqual([])
  expect(snapshot.admittedHandles).toEqual([])
  expect(snapshot.pendingRegistrations).toEqual([])
  expect(snapshot.registeredPtys).toEqual([])
  expect(snapshot.executionContexts).toEqual([])
}

/** The harness's provider effects (spawn/shutdown) in its log. */
const providerCalls = (h: Harness): string[] => h.log.map(([name]) => name).filter((name) => name.startsWith('provider.'))

function answering(answer: unknown, reads: { count: number }) {
  return createHarness({
    record: true,
    runtimeOverrides: () => ({
      getPtyOutputSequence: () => {
        reads.count++
        return answer as number
      },
    }),
  })
}

describe("stage 5: a runtime whose getPtyOutputSequence answers no sequence", () => {
  const targets: Record<string, PtySpawnOptions> = {
    session: { sessionId: 'p', file: '/bin/sh', scopeId: 'w', preAllocatedHandle: 'h-1' },
    claim: { sessionId: 'p', file: '/bin/sh', claim: { scopeId: 'w', key: 'c' }, preAllocatedHandle: 'h-1' },
  }
  for (const answer of MALFORMED) {
    for (const [target, options] of Object.entries(targets)) {
      it(`${label(answer)}, ${target} spawn: registration_refused naming the hook and the answer; nothing forked, nothing held`, async () => {
        const reads = { count: 0 }
        const h = answering(answer, reads)
        const error = (await rejectionOf(h.spawn(options))) as PtySpawnError
        expect(isPtySpawnError(error)).toBe(true)
        expect(error.code).toBe('registration_refused')
        expect(error.outcome).toBe('not_started')
        expect(error.ptyId).toBe('p')
        expect(error.message).toMatch(/^The runtime's getPtyOutputSequence answered .+ for PTY "p": expected an output sequence \(a finite number ≥ 0\)$/)
        expect(reads.count).toBe(1)
        expect(providerCalls(h)).toEqual([])
        expect(h.provider.livePtyIds()).toEqual([])
        expectRuntimeHoldsNothing(h.runtime)
        expect(h.claims.owners()).toEqual([])
      })
    }
  }

  it('the message shows the answer as given', async () => {
    for (const [answer, shown] of [['x', '"x"'], [Number.NaN, 'NaN'], [-1, '-1'], [{ n: 1 }, '{"n":1}']] as const) {
      const h = answering(answer, { count: 0 })
      const error = (await rejectionOf(h.spawn({ sessionId: 'p', file: '/bin/sh' }))) as PtySpawnError
      expect(error.message).toContain(shown)
    }
  })

  it("a slot's owner: refused before the attach, the binding left as it was", async () => {
    const reads = { count: 0 }
    const h = answering('x', reads)
    const owner = await h.provider.spawn({ sessionId: 'owner-1', file: '/bin/sh' })
    h.store.setLiveOwner({ scopeId: 'w', key: 'pane' }, { ptyId: owner.id, hostId: 'local', ...(owner.incarnationId === undefined ? {} : { incarnationId: owner.incarnationId }) })
    h.store.setPersistedOwner({ scopeId: 'w', key: 'pane' }, { ptyId: owner.id, hostId: 'local', ...(owner.incarnationId === undefined ? {} : { incarnationId: owner.incarnationId }) })
    h.log.length = 0
    const error = (await rejectionOf(h.spawn({ slot: { scopeId: 'w', key: 'pane' }, scopeId: 'w' }))) as PtySpawnError
    expect(error.code).toBe('registration_refused')
    expect(error.outcome).toBe('not_started')
    expect(error.ptyId).toBe('owner-1')
    expect(error.message).toContain('for PTY "owner-1"')
    expect(providerCalls(h)).toEqual([])
    expect(h.provider.livePtyIds()).toEqual(['owner-1'])
    expect(h.log.map(([name]) => name).filter((name) => name === 'store.bindOwner' || name === 'store.retireOwner')).toEqual([])
    expectRuntimeHoldsNothing(h.runtime)
  })

  it('a throwing getPtyOutputSequence rolls back as cleanly (registration_refused, nothing forked or held)', async () => {
    const h = createHarness({
      record: true,
      runtimeOverrides: () => ({
        getPtyOutputSequence: () => {
          throw new Error('runtime sequence table is down')
        },
      }),
    })
    const error = (await rejectionOf(h.spawn({ sessionId: 'p', file: '/bin/sh', scopeId: 'w', preAllocatedHandle: 'h-1' }))) as PtySpawnError
    expect(error.code).toBe('registration_refused')
    expect(error.outcome).toBe('not_started')
    expect(error.ptyId).toBe('p')
    expect(error.message).toMatch(/runtime sequence table is down/)
    expect(providerCalls(h)).toEqual([])
    expectRuntimeHoldsNothing(h.runtime)
  })

  it('a sequence (0, 7, 2.5) is accepted and handed to the rebase as sequenceBeforeSpawn; undefined and null as 0 (the seed reads the hook `?? 0`)', async () => {
    for (const [answer, before] of [[0, 0], [7, 7], [2.5, 2.5], [undefined, 0], [null, 0]] as const) {
      const handed: unknown[] = []
      const h = createHarness({
        runtimeOverrides: (runtime) => ({
          getPtyOutputSequence: () => answer as number,
          synchronizePtyOutputSequenceFromProvider: (id, sequence, before) => {
            handed.push(before)
            return runtime.synchronizePtyOutputSequenceFromProvider(id, sequence, before)
          },
        }),
      })
      h.provider.scriptNextSpawn({ providerSequence: { value: 3, generation: 'continued' } })
      await h.spawn({ sessionId: 'p', file: '/bin/sh' })
      expect(handed).toEqual([before])
    }
  })

  it('a spawn that expects no id does not read it (nothing to refuse)', async () => {
    const reads = { count: 0 }
    const h = answering('x', reads)
    await h.spawn({ file: '/bin/sh' })
    expect(reads.count).toBe(0)
  })

  it('under the controller: the spawn rejects with the typed error, the provider saw no spawn, the runtime holds nothing', async () => {
    const fake = createFakePtyProvider()
    const inner = createInMemoryPtyRuntime()
    let spawns = 0
    const runtime = { ...inner, getPtyOutputSequence: () => Number.NaN }
    const controller = createPtyController({ provider: wrapSpawn(fake, () => spawns++), runtime })
    const error = (await rejectionOf(controller.spawn({ sessionId: 'p', file: '/bin/sh', scopeId: 'w' }))) as PtySpawnError
    expect(isPtySpawnError(error)).toBe(true)
    expect([error.code, error.outcome, error.message]).toEqual([
      'registration_refused',
      'not_started',
      `The runtime's getPtyOutputSequence answered NaN (number) for PTY "p": expected an output sequence (a finite number ≥ 0)`,
    ])
    expect(spawns).toBe(0)
    expect(fake.livePtyIds()).toEqual([])
    expect(controller.hasPty('p')).not.toBe(true)
    expectRuntimeHoldsNothing(inner)
    await controller.dispose()
  })
})

/** The fake provider with `onSpawn` called before each of its spawns (its other members as they are). */
function wrapSpawn<T extends { spawn: (...args: never[]) => unknown }>(provider: T, onSpawn: () => void): T {
  return new Proxy(provider, {
    get(target, key, receiver) {
      if (key === 'spawn') {
        return (...args: never[]) => {
          onSpawn()
          return target.spawn(...args)
        }
      }
      const value: unknown = Reflect.get(target, key, receiver)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}
