import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PtySpawnOptions } from '../../src/contracts/index.js'
import { executeRuntimePtySpawn, isPtySpawnError, type PtySpawnOutcome, type ScopeSpawnLeaseRelease } from '../../src/spawn/index.js'
import { createHarness } from './harness.js'

const settledAll = (promises: Promise<PtySpawnOutcome>[]) => Promise.allSettled(promises)

/**
 * After spawns raced an abort: each spawn that completed called the provider once, each refused one
 * is `client_disconnected` / `not_started`, and nothing is left registered, pending or leased
 * beyond the provider's live PTYs. Counts each outcome in `seen`.
 */
function expectCompletedOrRefusedUnstarted(
  h: ReturnType<typeof createHarness>,
  results: PromiseSettledResult<PtySpawnOutcome>[],
  seen: { fulfilled: number; rejected: number },
): void {
  const fulfilled = results.filter((r) => r.status === 'fulfilled').length
  expect(h.provider.calls.filter((call) => call.method === 'spawn').length).toBe(fulfilled)
  for (const r of results) {
    seen[r.status] += 1
    if (r.status === 'rejected') {
      expect(isPtySpawnError(r.reason) && r.reason.code).toBe('client_disconnected')
      expect(isPtySpawnError(r.reason) && r.reason.outcome).toBe('not_started')
    }
  }
  const snapshot = h.runtime.inspect()
  expect([...h.provider.livePtyIds()].sort()).toEqual(snapshot.registeredPtys.map((p) => p.ptyId))
  expect(snapshot.pendingRegistrations).toEqual([])
  expect(snapshot.heldLeases).toEqual([])
}

describe('executeRuntimePtySpawn: races (fc.scheduler)', () => {
  it('N concurrent spawns of one claim key: exactly one provider spawn, N outcomes naming the same PTY', async () => {
    let joins = 0
    let liveAdoptions = 0
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 6 }), fc.boolean(), async (s, n, sameScope) => {
        const h = createHarness({
          runtimeOverrides: (runtime) => ({
            acquireScopeSpawn: (scopeId) => s.schedule(Promise.resolve(runtime.acquireScopeSpawn(scopeId) as ScopeSpawnLeaseRelease), 'lease'),
          }),
          providerOverrides: (provider) => ({ spawn: (options) => s.schedule(provider.spawn(options), 'spawn reply') }),
        })
        const claim = { key: 'agent-session' }
        const states = Array.from({ length: n }, (_, i) => h.state({ claim, scopeId: sameScope ? 'ws' : `ws-${i}` }))
        const spawns = states.map((state) => executeRuntimePtySpawn(state))
        const results = await s.waitFor(settledAll(spawns))
        const outcomes = results.map((r) => (r.status === 'fulfilled' ? r.value : null))
        expect(outcomes.every((o) => o !== null)).toBe(true)
        const ids = new Set(outcomes.map((o) => o?.result.id))
        expect(ids.size).toBe(1)
        expect(h.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
        expect(outcomes.filter((o) => o?.claimDisposition === 'created')).toHaveLength(1)
        expect(outcomes.filter((o) => o?.claimDisposition === 'adopted')).toHaveLength(n - 1)
        const [id] = ids
        const snapshot = h.runtime.inspect()
        expect(snapshot.registeredPtys.map((p) => p.ptyId)).toEqual([id])
        expect(snapshot.pendingRegistrations).toEqual([])
        expect(snapshot.heldLeases).toEqual([])
        expect(h.claims.owners().map((o) => o.ptyId)).toEqual([id])
        joins += states.filter((state) => state.joinedAnotherStart).length
        liveAdoptions += outcomes.filter((o, i) => o?.claimDisposition === 'adopted' && states[i]?.joinedAnotherStart === false).length
      }),
      { numRuns: 100 },
    )
    // Both ways of not spawning twice were exercised: joining the in-flight spawn, adopting the live owner.
    expect(joins).toBeGreaterThan(0)
    expect(liveAdoptions).toBeGreaterThan(0)
  })

  it('an exit racing the spawn reply: exited_during_start with nothing registered, unless the PTY was already registered when it exited', async () => {
    const seen = { fulfilled: 0, rejected: 0 }
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.constantFrom<'plain' | 'session' | 'slot' | 'claim'>('plain', 'session', 'slot', 'claim'),
        fc.boolean(),
        async (s, mode, providerFlagsEarlyExit) => {
          let registeredWhenExited: boolean | null = null
          const h = createHarness({
            storeOverrides: (store) => ({
              getPersistedOwner: (slot) => s.schedule(Promise.resolve(store.getPersistedOwner(slot)), 'persisted owner'),
              bindOwner: (slot, owner) => s.schedule(Promise.resolve(), 'bind').then(() => store.bindOwner(slot, owner)),
            }),
            providerOverrides: (provider) => ({
              spawn: (options) => {
                const reply = provider.spawn(options)
                const [id] = provider.livePtyIds()
                if (id !== undefined) {
                  void s.schedule(Promise.resolve(), 'release').then(() => provider.releaseSpawn(id))
                  void s.schedule(Promise.resolve(), 'exit').then(() => {
                    registeredWhenExited = h.runtime.isPtyRegistered(id)
                    provider.emitExit(id, { exitCode: 0, signal: 1 })
                  })
                }
                // A provider that does not flag `exitedBeforeSpawnReply` leaves the race to the pipeline.
                return providerFlagsEarlyExit ? reply : reply.then(({ exitedBeforeSpawnReply: _dropped, ...rest }) => rest)
              },
            }),
          })
          h.provider.scriptNextSpawn({ hang: true })
          const options: PtySpawnOptions = {}
          if (mode === 'session') options.sessionId = 'sess'
          if (mode === 'slot') options.slot = { key: 'pane' }
          if (mode === 'claim') options.claim = { key: 'agent' }
          const [result] = await s.waitFor(settledAll([h.spawn(options)]))
          await s.waitIdle()
          await h.provider.settle()
          expect(registeredWhenExited).not.toBeNull()
          seen[result?.status ?? 'rejected'] += 1
          if (registeredWhenExited === true) {
            expect(result?.status).toBe('fulfilled')
          } else {
            expect(result?.status).toBe('rejected')
            const reason: unknown = result?.status === 'rejected' ? result.reason : null
            expect(isPtySpawnError(reason) && reason.code).toBe('exited_during_start')
            expect(h.claims.owners()).toEqual([])
            expect(h.store.inspect()).toEqual({ live: {}, persisted: {} })
          }
          const snapshot = h.runtime.inspect()
          expect(snapshot.registeredPtys).toEqual([])
          expect(snapshot.pendingRegistrations).toEqual([])
          expect(snapshot.earlyExitFences).toEqual([])
          expect(h.provider.livePtyIds()).toEqual([])
        },
      ),
      { numRuns: 150 },
    )
    // Both sides of the race were exercised.
    expect(seen.fulfilled).toBeGreaterThan(0)
    expect(seen.rejected).toBeGreaterThan(0)
  })

  it('an abort racing the provider call: either no spawn at all, or a completed one — a live PTY is always registered', async () => {
    const seen = { fulfilled: 0, rejected: 0 }
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 3 }), fc.boolean(), async (s, n, withSlot) => {
        const controller = new AbortController()
        const h = createHarness({
          runtimeOverrides: (runtime) => ({
            acquireScopeSpawn: (scopeId) => s.schedule(Promise.resolve(runtime.acquireScopeSpawn(scopeId) as ScopeSpawnLeaseRelease), 'lease'),
          }),
          storeOverrides: (store) => ({
            getPersistedOwner: (slot) => s.schedule(Promise.resolve(store.getPersistedOwner(slot)), 'persisted owner'),
          }),
          providerOverrides: (provider) => ({ spawn: (options) => s.schedule(provider.spawn(options), 'spawn reply') }),
        })
        void s.schedule(Promise.resolve(), 'abort').then(() => controller.abort())
        const spawns = Array.from({ length: n }, (_, i) =>
          h.spawn({ signal: controller.signal, ...(withSlot ? { slot: { key: `pane-${i}` } } : { sessionId: `s-${i}` }) }),
        )
        const results = await s.waitFor(settledAll(spawns))
        await s.waitIdle()
        expectCompletedOrRefusedUnstarted(h, results, seen)
      }),
      { numRuns: 150 },
    )
    expect(seen.fulfilled).toBeGreaterThan(0)
    expect(seen.rejected).toBeGreaterThan(0)
  })

  it('leases granted at once or after maintenance, racing an abort: a spawn on a free scope reaches the provider before spawn() returns, each completes or is refused unstarted, nothing held', async () => {
    const seen = { fulfilled: 0, rejected: 0, waitedForMaintenance: 0 }
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 4 }), async (s, n) => {
        const controller = new AbortController()
        // The in-memory runtime as it is: a free scope's lease is granted at once (no turn), a scope
        // under maintenance answers with a promise.
        const h = createHarness({ providerOverrides: (provider) => ({ spawn: (options) => s.schedule(provider.spawn(options), 'spawn reply') }) })
        let aborted = false
        // From the maintenance's request on (it may wait for spawns in flight), later spawns queue behind it.
        let underMaintenance = false
        const maintenance = s.schedule(Promise.resolve(), 'maintenance starts').then(async () => {
          underMaintenance = true
          const release = await h.runtime.acquireScopeExclusive('ws')
          await s.schedule(Promise.resolve(), 'maintenance ends')
          underMaintenance = false
          release()
        })
        void s.schedule(Promise.resolve(), 'abort').then(() => {
          controller.abort()
          aborted = true
        })
        const spawns = Array.from({ length: n }, (_, i) =>
          s.schedule(Promise.resolve(), `spawn ${i} asked`).then(() => {
            if (underMaintenance) seen.waitedForMaintenance += 1
            const before = h.provider.calls.filter((call) => call.method === 'spawn').length
            const spawning = h.spawn({ scopeId: 'ws', sessionId: `s-${i}`, signal: controller.signal })
            // Asked on a free scope, the provider is called before spawn() returns.
            if (!underMaintenance && !aborted) expect(h.provider.calls.filter((call) => call.method === 'spawn').length).toBe(before + 1)
            return spawning
          }),
        )
        const results = await s.waitFor(settledAll(spawns))
        await s.waitFor(maintenance)
        await s.waitIdle()
        expectCompletedOrRefusedUnstarted(h, results, seen)
      }),
      { numRuns: 150 },
    )
    expect(seen.fulfilled).toBeGreaterThan(0)
    expect(seen.rejected).toBeGreaterThan(0)
    expect(seen.waitedForMaintenance).toBeGreaterThan(0)
  })
})
