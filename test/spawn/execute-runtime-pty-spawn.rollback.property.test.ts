import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ProviderSequence, PtySpawnOptions } from '../../src/contracts/index.js'
import { isPtySpawnError, type PtySpawnErrorCode, type PtySpawnRuntime, type PtySlotStore } from '../../src/spawn/index.js'
import { createHarness, rejectionOf } from './harness.js'

type Mode = 'plain' | 'session' | 'slot' | 'claim'

type Scenario = {
  mode: Mode
  handle: boolean
  scopeId: string | undefined
  providerSequence: ProviderSequence | undefined
  preexisting: boolean
}

type RuntimeHook = keyof PtySpawnRuntime
type StoreHook = keyof PtySlotStore

/** A failure injected at one stage, and the code the caller must get for it. */
type Injection =
  | { kind: 'runtime_throws'; hook: RuntimeHook; code: PtySpawnErrorCode }
  | { kind: 'store_throws'; hook: StoreHook; code: PtySpawnErrorCode }
  | { kind: 'provider_rejects'; code: 'provider_spawn_failed' }
  | { kind: 'exit_before_reply'; code: 'exited_during_start' }
  | { kind: 'exit_while_pending'; code: 'exited_during_start' }
  | { kind: 'admission_refused'; code: 'registration_refused' }
  | { kind: 'abort'; code: 'client_disconnected' }

/** Every failure that can happen in `scenario`, in stage order. */
function injectionsFor(s: Scenario): Injection[] {
  const list: Injection[] = [{ kind: 'runtime_throws', hook: 'acquireScopeSpawn', code: 'scope_lease_refused' }]
  if (s.handle) list.push({ kind: 'runtime_throws', hook: 'admitHandle', code: 'registration_refused' })
  if (s.mode === 'slot') {
    list.push({ kind: 'store_throws', hook: 'getLiveOwner', code: 'slot_owner_unverified' })
    list.push({ kind: 'store_throws', hook: 'getPersistedOwner', code: 'slot_owner_unverified' })
  }
  list.push({ kind: 'runtime_throws', hook: 'beginPtyRegistration', code: 'registration_refused' })
  if (s.mode === 'session') list.push({ kind: 'runtime_throws', hook: 'getPtyOutputSequence', code: 'registration_refused' })
  list.push({ kind: 'abort', code: 'client_disconnected' })
  list.push({ kind: 'provider_rejects', code: 'provider_spawn_failed' })
  list.push({ kind: 'exit_before_reply', code: 'exited_during_start' })
  list.push({ kind: 'exit_while_pending', code: 'exited_during_start' })
  list.push({ kind: 'admission_refused', code: 'registration_refused' })
  if (s.providerSequence !== undefined) {
    list.push({ kind: 'runtime_throws', hook: 'synchronizePtyOutputSequenceFromProvider', code: 'commit_failed' })
  }
  list.push({ kind: 'runtime_throws', hook: 'preparePtyExecutionContext', code: 'commit_failed' })
  if (s.mode === 'slot') list.push({ kind: 'store_throws', hook: 'bindOwner', code: 'commit_failed' })
  list.push({ kind: 'runtime_throws', hook: 'commitPtyRegistration', code: 'commit_failed' })
  return list
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  mode: fc.constantFrom<Mode>('plain', 'session', 'slot', 'claim'),
  handle: fc.boolean(),
  scopeId: fc.option(fc.constantFrom('ws-a', 'ws-b'), { nil: undefined }),
  providerSequence: fc.option(
    fc.record({ value: fc.nat({ max: 1000 }), generation: fc.constantFrom<'continued' | 'reset'>('continued', 'reset') }),
    { nil: undefined },
  ),
  preexisting: fc.boolean(),
})

const caseArb = scenarioArb.chain((scenario) =>
  fc.constantFrom(...injectionsFor(scenario)).map((injection) => ({ scenario, injection })),
)

function optionsFor(s: Scenario, signal: AbortSignal | undefined): PtySpawnOptions {
  const options: PtySpawnOptions = {}
  if (s.scopeId !== undefined) options.scopeId = s.scopeId
  if (s.handle) options.preAllocatedHandle = 'handle-under-test'
  if (s.mode === 'session') options.sessionId = 'session-under-test'
  if (s.mode === 'slot') options.slot = { key: 'slot-under-test' }
  if (s.mode === 'claim') options.claim = { key: 'claim-under-test' }
  if (signal !== undefined) options.signal = signal
  return options
}

describe('executeRuntimePtySpawn: rollback property', () => {
  it('for every stage and every failure injected there, the rejection leaves no lease, pending registration, handle, live PTY or claim behind', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ scenario, injection }) => {
        let armed = false
        const boom = new Error(`injected at ${injection.kind}`)
        const h = createHarness({
          runtimeOverrides: (runtime) => {
            const overrides: Partial<PtySpawnRuntime> = {}
            if (injection.kind === 'runtime_throws') {
              const original = runtime[injection.hook] as (...args: unknown[]) => unknown
              Object.assign(overrides, {
                [injection.hook]: (...args: unknown[]) => {
                  if (armed) throw boom
                  return original.apply(runtime, args)
                },
              })
            }
            if (injection.kind === 'admission_refused') {
              overrides.assertPtyRegistrationAllowed = (ptyId, incarnationId) => {
                if (armed) throw boom
                runtime.assertPtyRegistrationAllowed(ptyId, incarnationId)
              }
            }
            return overrides
          },
          storeOverrides: (store) => {
            if (injection.kind !== 'store_throws') return {}
            const original = store[injection.hook] as (...args: unknown[]) => unknown
            return {
              [injection.hook]: (...args: unknown[]) => {
                if (armed) throw boom
                return original.apply(store, args)
              },
            }
          },
        })
        if (scenario.preexisting) {
          await h.spawn({ sessionId: 'bystander', claim: { key: 'other-claim' }, scopeId: 'ws-a', preAllocatedHandle: 'handle-under-test' })
        }
        const before = {
          runtime: h.runtime.inspect(),
          live: h.provider.livePtyIds(),
          owners: h.claims.owners(),
          store: h.store.inspect(),
          listeners: h.provider.listenerCount(),
        }
        const script: Parameters<typeof h.provider.scriptNextSpawn>[0] = {}
        if (scenario.providerSequence !== undefined) script.providerSequence = scenario.providerSequence
        if (injection.kind === 'provider_rejects') script.fail = boom
        if (injection.kind === 'exit_before_reply') script.exitBeforeReply = { exitCode: 3 }
        if (injection.kind === 'exit_while_pending') script.hang = true
        h.provider.scriptNextSpawn(script)
        let signal: AbortSignal | undefined
        if (injection.kind === 'abort') {
          const controller = new AbortController()
          controller.abort()
          signal = controller.signal
        }
        armed = true
        const spawning = h.spawn(optionsFor(scenario, signal))
        if (injection.kind === 'exit_while_pending') {
          await h.provider.settle()
          const hung = h.provider.livePtyIds().filter((id) => !before.live.includes(id))
          expect(hung).toHaveLength(1)
          h.provider.emitExit(hung[0] ?? '', { exitCode: 0, signal: 15 })
          h.provider.releaseSpawn()
        }
        const error = await rejectionOf(spawning)
        armed = false
        await h.provider.settle()
        expect(isPtySpawnError(error)).toBe(true)
        if (!isPtySpawnError(error)) return
        expect(error.code).toBe(injection.code)
        const expectedCause = ['runtime_throws', 'store_throws', 'provider_rejects', 'admission_refused'].includes(injection.kind)
        if (expectedCause) expect(error.cause).toBe(boom)
        expect(h.runtime.inspect()).toEqual(before.runtime)
        expect(h.provider.livePtyIds()).toEqual(before.live)
        expect(h.claims.owners()).toEqual(before.owners)
        expect(h.store.inspect()).toEqual(before.store)
        expect(h.provider.pendingSpawnCount()).toBe(0)
        // The pipeline's own exit watcher is gone too.
        expect(h.provider.listenerCount()).toBe(before.listeners)
        const spawnCalls = h.provider.calls.filter((call) => call.method === 'spawn').length - (scenario.preexisting ? 1 : 0)
        expect(error.outcome).toBe(spawnCalls === 0 || injection.kind === 'provider_rejects' ? 'not_started' : 'rolled_back')
      }),
      { numRuns: 300 },
    )
  })
})
