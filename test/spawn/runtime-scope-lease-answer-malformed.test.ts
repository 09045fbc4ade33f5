// A host's runtime answers stage 1 (`acquireScopeSpawn`) with the lease's release function, or a
// promise of it. An answer that is not one (42, a `{ release }` object, nothing from a hook that
// forgot its `return`) was kept as the lease: the spawn went on, and at its end calling it threw,
// silently ignored — the lease the runtime may hold was never released (a later exclusive holder,
// maintenance, waited for good). The answer is now refused at once: `scope_lease_refused`, naming
// the hook and showing the answer, before anything else is taken (no handle, registration, claim,
// slot binding, process).
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createInMemoryPtyRuntime, isPtySpawnError, type PtySpawnError, type ScopeSpawnLeaseRelease } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createHarness, rejectionOf } from './harness.js'

const MALFORMED: readonly { label: string; answer: unknown }[] = [
  { label: '42', answer: 42 },
  { label: 'a { release } object', answer: { release: () => undefined } },
  { label: 'nothing (undefined)', answer: undefined },
  { label: 'null', answer: null },
  { label: "'release'", answer: 'release' },
]

/** Each case answered now, and as a promise (a lease granted later). */
const CASES = MALFORMED.flatMap(({ label, answer }) => [
  { label, answer: () => answer },
  { label: `a promise of ${label}`, answer: () => Promise.resolve(answer) },
])

describe('a runtime whose acquireScopeSpawn answers no release function', () => {
  for (const { label, answer } of CASES) {
    it(`${label}: scope_lease_refused naming the hook and the answer; nothing taken, nothing started`, async () => {
      let acquired = 0
      const h = createHarness({
        runtimeOverrides: () => ({
          acquireScopeSpawn: () => {
            acquired++
            return answer() as ScopeSpawnLeaseRelease
          },
        }),
      })
      const error = (await rejectionOf(h.spawn({ sessionId: 'p', scopeId: 'ws', preAllocatedHandle: 'h', slot: { key: 'pane', scopeId: 'ws' } }))) as PtySpawnError
      expect(isPtySpawnError(error)).toBe(true)
      expect([error.code, error.outcome]).toEqual(['scope_lease_refused', 'not_started'])
      expect(error.message).toMatch(/^The runtime's acquireScopeSpawn answered .+ for scope "ws": expected the lease's release function \(or a promise of it\)$/)
      expect(acquired).toBe(1)
      // Stage 1 refused: the provider was never asked, and nothing else was taken.
      expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
      const snapshot = h.runtime.inspect()
      expect([snapshot.admittedHandles, snapshot.pendingRegistrations, snapshot.registeredPtys]).toEqual([[], [], []])
      expect(h.store.inspect()).toEqual({ live: {}, persisted: {} })
    })
  }

  it('names a spawn without a scope as such', async () => {
    const h = createHarness({ runtimeOverrides: () => ({ acquireScopeSpawn: () => 7 as unknown as ScopeSpawnLeaseRelease }) })
    const error = (await rejectionOf(h.spawn({}))) as PtySpawnError
    expect(error.code).toBe('scope_lease_refused')
    expect(error.message).toBe("The runtime's acquireScopeSpawn answered 7 (number) without a scope: expected the lease's release function (or a promise of it)")
  })

  it('a release function, now or later, is held and released at the end (unchanged)', async () => {
    for (const later of [false, true]) {
      let released = 0
      const release = () => {
        released++
      }
      const h = createHarness({ runtimeOverrides: () => ({ acquireScopeSpawn: () => (later ? Promise.resolve(release) : release) }) })
      await h.spawn({ scopeId: 'ws' })
      expect(released).toBe(1)
    }
  })

  it('under the controller: the spawn rejects typed, and its session id is not left coming', async () => {
    const fake = createFakePtyProvider()
    const runtime = { ...createInMemoryPtyRuntime(), acquireScopeSpawn: () => 42 as unknown as ScopeSpawnLeaseRelease }
    const controller = createPtyController({ provider: fake, runtime })
    await expect(controller.spawn({ sessionId: 'p', file: '/bin/sh' })).rejects.toMatchObject({ code: 'scope_lease_refused', outcome: 'not_started' })
    expect(fake.livePtyIds()).toEqual([])
    expect(controller.kill('p')).toBe(false)
    await controller.dispose()
  })
})
