/**
 * Whose process a spawn run may stop, and what a claim's joiners are told — found by a bug hunt
 * from the host's side (3 Dec): a session spawn answered as a re-attach counted as a started
 * process (its commit hook fired, its rollback stopped someone else's PTY); joiners were answered
 * before their creator committed (they adopted a PTY its rollback then stopped, or took its error
 * before the rollback said whether the process was stopped, without the option it named); a slot
 * binding's undo was recorded only after a write that could land in part.
 */
import { describe, expect, it } from 'vitest'
import { isPtySpawnError } from 'ptykit/spawn'
import { createFakePtyProvider } from 'ptykit/testing'
import { createHarness, rejectionOf } from './harness.js'
import { createPtyController } from 'ptykit/controller'

describe('spawn pipeline: what a run owns, and what its joiners are told', () => {
  // docs/spawn-pipeline.md stage 8: "`onPtySpawnCommitted()` — only when a process was actually
  // **started** (never for a slot re-attach or a claim adoption/join)".
  it('a session spawn the provider answers as a re-attach does not fire onPtySpawnCommitted', async () => {
    const h = createHarness()
    const first = await h.spawn({ sessionId: 'sess-1' })
    expect(first.result.isReattach).toBe(false)
    let fired = 0
    const second = await h.spawn({ sessionId: 'sess-1', onPtySpawnCommitted: () => void fired++ })
    expect(second.result.isReattach).toBe(true)
    expect(fired).toBe(0)
  })

  // docs/spawn-pipeline.md: "A PTY **this run physically started** is shut down ... A **re-attached**
  // slot owner, an **adopted** claim owner and a **joined** claim ... are never shut down: they
  // belong to someone else." (RuntimePtySpawnState.startedProcess: "a fresh spawn, not an attach".)
  it('a failed session spawn that the provider answered as a re-attach does not shut the existing process down', async () => {
    let refuse = false
    const h = createHarness({
      runtimeOverrides: (runtime) => ({
        assertPtyRegistrationAllowed: (id, inc) => {
          if (refuse) throw new Error('refused by host')
          runtime.assertPtyRegistrationAllowed(id, inc)
        },
      }),
    })
    const first = await h.spawn({ sessionId: 'sess-1' })
    refuse = true
    const error = await rejectionOf(h.spawn({ sessionId: 'sess-1' }))
    expect(isPtySpawnError(error) && error.code).toBe('registration_refused')
    // The process the first spawn started (and registered) is still running: this run did not start it.
    expect(h.provider.livePtyIds()).toContain(first.result.id)
    expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toEqual([])
    expect(isPtySpawnError(error) && error.outcome).toBe('not_started')
  })

  // docs/spawn-pipeline.md (Claims): "joiners get `adopted` with the same owner (or the creator's
  // error)"; a joiner never owns the process, and "every failure path rolls back what it did".
  it('a claim joiner does not report success for a PTY its creator rolled back', async () => {
    const h = createHarness({
      runtimeOverrides: () => ({
        // Only the creator's reply carries a providerSequence: its commit fails, it rolls back.
        synchronizePtyOutputSequenceFromProvider: () => {
          throw new Error('sequence store down')
        },
      }),
    })
    const claim = { key: 'agent' }
    const [creator, joiner] = await Promise.allSettled([h.spawn({ claim }), h.spawn({ claim })])
    await h.provider.settle()
    expect(creator.status).toBe('rejected')
    // The creator's process was shut down by its rollback, and its claim released.
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.claims.owners()).toEqual([])
    // So the joiner must not hold a "successful" spawn of a process that no longer exists.
    expect(joiner.status).toBe('rejected')
  })

  // docs/spawn-pipeline.md (error codes): "`invalid_spawn_options` (from the provider) ... The
  // `PtySpawnError` carries `option`; the refusal is the `cause`", and joiners get "the creator's error".
  it('a claim joiner whose creator spawn was refused an option gets the option named too', async () => {
    const h = createHarness()
    const refusal = Object.assign(new TypeError('Expected the `cwd` option to exist, got "/nope"'), { code: 'invalid_spawn_option', option: 'cwd' })
    h.provider.scriptNextSpawn({ fail: refusal })
    const claim = { key: 'agent' }
    const [creator, joiner] = await Promise.allSettled([h.spawn({ claim, cwd: '/nope' }), h.spawn({ claim, cwd: '/nope' })])
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
    const creatorError = creator.status === 'rejected' ? creator.reason : null
    const joinerError = joiner.status === 'rejected' ? joiner.reason : null
    expect(isPtySpawnError(creatorError) && creatorError.code).toBe('invalid_spawn_options')
    expect(isPtySpawnError(creatorError) && creatorError.option).toBe('cwd')
    expect(isPtySpawnError(joinerError) && joinerError.code).toBe('invalid_spawn_options')
    expect(isPtySpawnError(joinerError) && joinerError.option).toBe('cwd')
  })

  // docs/spawn-pipeline.md (Claims): joiners get "the creator's error"; spawn-failure.ts: "An error
  // of another run (a joined claim's creator) is itself the cause, and keeps its own `outcome`";
  // PtySpawnError.outcome: "Whether a process may still exist".
  it('a claim joiner reports the same outcome as its creator when the creator could not stop its process', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const claim = { key: 'agent' }
    const [creator, joiner] = await Promise.allSettled([
      h.spawn({
        claim,
        onPtySpawnCommitted: () => {
          throw new Error('hook bug')
        },
      }),
      h.spawn({ claim }),
    ])
    const creatorError = creator.status === 'rejected' ? creator.reason : null
    const joinerError = joiner.status === 'rejected' ? joiner.reason : null
    expect(isPtySpawnError(creatorError) && [creatorError.code, creatorError.outcome]).toEqual(['commit_failed', 'unknown'])
    // The process may still run: the joiner must not say "not_started".
    expect(h.provider.livePtyIds()).toHaveLength(1)
    expect(isPtySpawnError(joinerError) && [joinerError.code, joinerError.outcome]).toEqual(['commit_failed', 'unknown'])
  })

  // docs/architecture.md SP1: "Each stage registers its undo before the next starts"; spawn-pipeline.md:
  // `commit_failed` when "`bindOwner` ... threw" with outcome `rolled_back`, and the commit's undo
  // "a fresh slot binding is retired". A store whose live write lands and whose persisted write rejects
  // must not keep the slot bound to the PTY the rollback stopped.
  it('a bindOwner that binds and then rejects leaves no slot binding behind', async () => {
    const h = createHarness({
      storeOverrides: () => ({
        bindOwner: async (slot, owner) => {
          h.store.setLiveOwner(slot, owner)
          await Promise.resolve()
          throw new Error('persisted write failed')
        },
      }),
    })
    const slot = { key: 'pane' }
    const error = await rejectionOf(h.spawn({ slot }))
    expect(isPtySpawnError(error) && [error.code, error.outcome]).toEqual(['commit_failed', 'rolled_back'])
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.store.getLiveOwner(slot)).toBeNull()
  })

  // Same root as above, through the controller with only default components: a session re-attach
  // fires the commit hook; when that hook throws, the rollback shuts the running session down.
  // docs/spawn-pipeline.md: "A **re-attached** slot owner ... never shut down: they belong to someone else."
  it('controller: a re-attaching session spawn whose commit hook throws does not kill the live session', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const controller = createPtyController({ provider })
    const first = await controller.spawn({ sessionId: 'sess-1' })
    const second = controller.spawn({
      sessionId: 'sess-1',
      onPtySpawnCommitted: () => {
        throw new Error('hook bug')
      },
    })
    await second.then(
      () => undefined,
      () => undefined,
    )
    await provider.settle()
    expect(provider.livePtyIds()).toContain(first.id)
    expect(provider.calls.filter((call) => call.method === 'shutdown')).toEqual([])
  })
})
