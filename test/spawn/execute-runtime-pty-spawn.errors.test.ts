import { describe, expect, it, vi } from 'vitest'
import { toPtyIncarnationId, type PtyProvider } from '../../src/contracts/index.js'
import {
  createClaimedOwnerRegistry,
  createInMemoryPtyRuntime,
  createRuntimePtySpawnState,
  executeRuntimePtySpawn,
  isPtySpawnAbortError,
  isPtySpawnError,
  PtySpawnError,
  type PtySpawnErrorCode,
} from '../../src/spawn/index.js'
import { MAX_PTY_DIMENSION as MAX_PTY_SPAWN_DIMENSION } from '../../src/contracts/index.js'
import { createFakePtyProvider, FakePtyAbsentError } from '../../src/testing/index.js'
import { createHarness, rejectionOf } from './harness.js'

async function expectSpawnError(promise: Promise<unknown>, code: PtySpawnErrorCode): Promise<PtySpawnError> {
  const error = await rejectionOf(promise)
  expect(isPtySpawnError(error)).toBe(true)
  expect((error as PtySpawnError).code).toBe(code)
  return error as PtySpawnError
}

const EMPTY_RUNTIME = createInMemoryPtyRuntime().inspect()

describe('createRuntimePtySpawnState: validation before any side effect', () => {
  it.each([
    [{ cols: 0 }, 'Expected the `cols` option to be an integer from 1 to 65535, got 0 (number)'],
    [{ rows: 2.5 }, 'Expected the `rows` option to be an integer from 1 to 65535, got 2.5 (number)'],
    [{ cols: MAX_PTY_SPAWN_DIMENSION + 1 }, `got ${MAX_PTY_SPAWN_DIMENSION + 1} (number)`],
    [{ slot: { key: '' } }, 'Expected the `slot.key` option to be a non-empty string, got "" (string)'],
    [{ claim: { key: 'a' }, slot: { key: 'b' } }, 'Expected at most one of the `slot` and `claim` options'],
    [{ sessionId: '' }, 'Expected the `sessionId` option to be a non-empty string'],
    [{ signal: {} }, 'Expected the `signal` option to be an AbortSignal'],
    [{ isNewSession: 'yes' }, 'Expected the `isNewSession` option to be a boolean, got "yes" (string)'],
    [{ metadata: 'x' }, 'Expected the `metadata` option to be an object, got "x" (string)'],
    [{ slotCreateClaim: 'release' }, 'Expected the `slotCreateClaim` option to be a function'],
    [{ slotCreateClaim: () => undefined }, 'Expected the `slotCreateClaim` option to be given only with the `slot` it was claimed for'],
    // Before any provider: a Map's variables are not its entries, every provider dropped them.
    [{ env: new Map([['TOKEN', 'secret-value']]) }, 'Expected the `env` option to be an object of string values (a record: not a Map, not an array), got [redacted] (Map)'],
  ])('%j is invalid_spawn_options with a TypeError cause naming the option and value', (options, message) => {
    const h = createHarness({ record: true })
    let thrown: unknown
    try {
      h.state(options as never)
    } catch (error) {
      thrown = error
    }
    expect(isPtySpawnError(thrown)).toBe(true)
    const error = thrown as PtySpawnError
    expect(error.code).toBe('invalid_spawn_options')
    expect(error.outcome).toBe('not_started')
    expect(error.cause).toBeInstanceOf(TypeError)
    expect((error.cause as TypeError).message).toContain(message)
    expect(h.log).toEqual([])
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
  })

  it('a slot spawn without a store is a host wiring TypeError', () => {
    expect(() => createRuntimePtySpawnState({ resolveProvider: () => undefined }, { slot: { key: 'k' } })).toThrow(
      new TypeError('Expected the `store` dependency because the spawn names slot "k", got undefined'),
    )
  })

  // Why: slots of different scopes may share a key; these named the key alone (slot "k").
  it('the refusals about `slot` name the slot as the caller passed it, its scope included', () => {
    const slot = { scopeId: 'ws', key: 'k' }
    expect(() => createRuntimePtySpawnState({ resolveProvider: () => undefined }, { slot })).toThrow(
      new TypeError('Expected the `store` dependency because the spawn names slot "k" of scope "ws", got undefined'),
    )
    const h = createHarness()
    let thrown: unknown
    try {
      h.state({ slot, claim: { key: 'c' } })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({
      code: 'invalid_spawn_options',
      option: 'claim',
      message: 'Expected at most one of the `slot` and `claim` options, got both (slot "k" of scope "ws", claim "c")',
    })
  })

  it('a state runs once', async () => {
    const h = createHarness()
    const state = h.state({})
    await executeRuntimePtySpawn(state)
    expect(state.outcome?.result.id).toBeDefined()
    await expect(executeRuntimePtySpawn(state)).rejects.toThrow(TypeError)
  })
})

describe('executeRuntimePtySpawn: each error code', () => {
  it('scope_lease_refused: the lease hook throws; nothing else happened', async () => {
    const refusal = new Error('scope is sleeping')
    const h = createHarness({ runtimeOverrides: () => ({ acquireScopeSpawn: () => { throw refusal } }) })
    const error = await expectSpawnError(h.spawn({ sessionId: 's', preAllocatedHandle: 'h' }), 'scope_lease_refused')
    expect(error.cause).toBe(refusal)
    expect(error.outcome).toBe('not_started')
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('client_disconnected: an aborted signal stops the spawn before the provider is called', async () => {
    const h = createHarness()
    const controller = new AbortController()
    controller.abort(new Error('socket closed'))
    const error = await expectSpawnError(h.spawn({ sessionId: 's', preAllocatedHandle: 'h', scopeId: 'w', signal: controller.signal }), 'client_disconnected')
    expect(error.cause).toEqual(new Error('socket closed'))
    expect(error.outcome).toBe('not_started')
    // Recognisable as an abort: the guard, the reason as cause, and a message that says so.
    expect(isPtySpawnAbortError(error)).toBe(true)
    expect(error.message).toBe('The spawn was aborted (its signal fired: Error: socket closed) before the provider was called')
    expect(h.provider.calls.some((call) => call.method === 'spawn')).toBe(false)
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('a default abort reason (AbortError) is the cause and named in the message; other errors are not aborts', async () => {
    const h = createHarness()
    const controller = new AbortController()
    controller.abort()
    const error = await expectSpawnError(h.spawn({ signal: controller.signal }), 'client_disconnected')
    expect(error.cause).toBe(controller.signal.reason)
    expect(error.message).toMatch(/^The spawn was aborted \(its signal fired: AbortError: /)
    expect(isPtySpawnAbortError(error)).toBe(true)
    expect(isPtySpawnAbortError(new PtySpawnError('provider_spawn_failed', 'x'))).toBe(false)
    expect(isPtySpawnAbortError(new Error('aborted'))).toBe(false)
  })

  it('an abort after the provider call changes nothing: the spawn completes', async () => {
    const h = createHarness()
    const controller = new AbortController()
    h.provider.scriptNextSpawn({ hang: true })
    const spawning = h.spawn({ signal: controller.signal })
    await h.provider.settle()
    controller.abort()
    h.provider.releaseSpawn()
    const outcome = await spawning
    expect(h.runtime.isPtyRegistered(outcome.result.id)).toBe(true)
  })

  it('slot_owner_conflict: live state and the persisted store name different owners', async () => {
    const h = createHarness()
    const slot = { key: 'pane' }
    h.store.setLiveOwner(slot, { ptyId: 'a', hostId: 'local' })
    h.store.setPersistedOwner(slot, { ptyId: 'b', hostId: 'local' })
    const error = await expectSpawnError(h.spawn({ slot }), 'slot_owner_conflict')
    expect(error.ptyId).toBe('a')
    expect(h.provider.calls.some((call) => call.method === 'spawn')).toBe(false)
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('slot_owner_conflict: the owner runs on another host than the spawn targets', async () => {
    const h = createHarness()
    const slot = { key: 'pane' }
    h.store.setPersistedOwner(slot, { ptyId: 'a', hostId: 'ssh:box' })
    await expectSpawnError(h.spawn({ slot }), 'slot_owner_conflict')
  })

  // Why: slots of different scopes may share a key (the store keys them by both); a refusal that
  // named the key alone did not say which of the caller's slots it was about.
  it('stage 3 refusals name the slot as the caller passed it, its scope included', async () => {
    const slot = { scopeId: 'workspace-1', key: 'pane' }
    const conflicting = createHarness()
    conflicting.store.setLiveOwner(slot, { ptyId: 'a', hostId: 'local' })
    conflicting.store.setPersistedOwner(slot, { ptyId: 'b', hostId: 'local' })
    expect((await expectSpawnError(conflicting.spawn({ slot }), 'slot_owner_conflict')).message).toBe(
      'Slot "pane" of scope "workspace-1": live state names PTY "a" on "local", the persisted store "b" on "local"',
    )
    const elsewhere = createHarness()
    elsewhere.store.setPersistedOwner(slot, { ptyId: 'a', hostId: 'ssh:box' })
    expect((await expectSpawnError(elsewhere.spawn({ slot }), 'slot_owner_conflict')).message).toBe(
      'Slot "pane" of scope "workspace-1" is owned by PTY "a" on host "ssh:box", but the spawn targets "local"',
    )
    const malformed = createHarness({ storeOverrides: () => ({ getLiveOwner: () => 7 as never }) })
    expect((await expectSpawnError(malformed.spawn({ slot }), 'slot_owner_unverified')).message).toMatch(/^Slot "pane" of scope "workspace-1": the slot store's getLiveOwner answered 7 \(number\)/)
    // A store that throws: before, "Spawn failed at stage resolve_slot_owner: db down" (no slot).
    const failing = createHarness({ storeOverrides: () => ({ getPersistedOwner: () => Promise.reject(new Error('db down')) }) })
    const unread = await expectSpawnError(failing.spawn({ slot }), 'slot_owner_unverified')
    expect(unread.message).toBe('Slot "pane" of scope "workspace-1": the slot store could not be read: db down')
    expect(unread.cause).toMatchObject({ message: 'db down' })
    expect(unread.outcome).toBe('not_started')
    // A slot without a scope is named by its key, as before.
    const unscoped = createHarness()
    unscoped.store.setLiveOwner({ key: 'pane' }, { ptyId: 'a', hostId: 'local' })
    unscoped.store.setPersistedOwner({ key: 'pane' }, { ptyId: 'b', hostId: 'local' })
    expect((await expectSpawnError(unscoped.spawn({ slot: { key: 'pane' } }), 'slot_owner_conflict')).message).toMatch(/^Slot "pane": live state/)
  })

  it('a typed host-reported absence retires the binding and falls through to a fresh spawn', async () => {
    const h = createHarness()
    const slot = { key: 'pane' }
    const stale = { ptyId: 'gone', hostId: 'local', incarnationId: toPtyIncarnationId('old') }
    h.store.bindOwner(slot, stale)
    const outcome = await h.spawn({ slot })
    expect(outcome.result.isReattach).toBe(false)
    expect(outcome.result.id).not.toBe('gone')
    expect(h.store.getLiveOwner(slot)).toEqual({ ptyId: outcome.result.id, hostId: 'local', incarnationId: outcome.result.incarnationId })
    expect(h.runtime.inspect().pendingRegistrations).toEqual([])
  })

  it('slot_owner_changed: the binding changed while the owner was proven absent', async () => {
    const h = createHarness({ storeOverrides: () => ({ retireOwner: () => false }) })
    const slot = { key: 'pane' }
    h.store.bindOwner(slot, { ptyId: 'gone', hostId: 'local' })
    const error = await expectSpawnError(h.spawn({ slot }), 'slot_owner_changed')
    expect(error.cause).toBeInstanceOf(FakePtyAbsentError)
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('slot_owner_unverified, naming retireOwner, when the store answers it neither a boolean nor a count (before: slot_owner_changed, a change that never happened)', async () => {
    const h = createHarness({ storeOverrides: () => ({ retireOwner: () => undefined as unknown as boolean }) })
    const slot = { key: 'pane' }
    h.store.bindOwner(slot, { ptyId: 'gone', hostId: 'local' })
    const error = await expectSpawnError(h.spawn({ slot }), 'slot_owner_unverified')
    expect(error.message).toBe(
      'Slot "pane": the slot store\'s retireOwner answered undefined (undefined) for PTY "gone", proven absent: expected true (the binding retired), false (the slot names another owner by now) or a count of rows retired',
    )
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  // A count of rows is a non-negative integer: NaN read as "not retired" (slot_owner_changed), and
  // -1 or 1.5 as "retired" (a fresh spawn on the word of a store that said nothing readable).
  it.each([Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])('slot_owner_unverified, naming retireOwner, when it answers %s: no boolean, no count of rows', async (answer) => {
    const h = createHarness({ storeOverrides: () => ({ retireOwner: () => answer as unknown as boolean }) })
    const slot = { key: 'pane' }
    h.store.bindOwner(slot, { ptyId: 'gone', hostId: 'local' })
    const error = await expectSpawnError(h.spawn({ slot }), 'slot_owner_unverified')
    expect(error.message).toContain(`retireOwner answered ${String(answer)} (number)`)
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  // Why: wrapped by stage alone, a retireOwner that threw surfaced as "Spawn failed at stage
  // retire_slot_owner: db down", naming no slot.
  it.each([
    ['throws', () => { throw new Error('db down') }],
    ['rejects', () => Promise.reject(new Error('db down'))],
  ])('slot_owner_unverified naming the slot and the PTY when retireOwner %s; nothing is left held', async (_how, retireOwner) => {
    const h = createHarness({ storeOverrides: () => ({ retireOwner: retireOwner as unknown as () => boolean }) })
    const slot = { scopeId: 'ws', key: 'pane' }
    h.store.bindOwner(slot, { ptyId: 'gone', hostId: 'local' })
    const error = await expectSpawnError(h.spawn({ slot, scopeId: 'ws' }), 'slot_owner_unverified')
    expect(error.message).toBe('Slot "pane" of scope "ws": the slot store\'s retireOwner failed for PTY "gone", proven absent: db down')
    expect(error.cause).toMatchObject({ message: 'db down' })
    expect(error.outcome).toBe('not_started')
    expect(error.ptyId).toBe('gone')
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
    // The binding is the store's: it is neither retired nor replaced on the word of a failed retire.
    expect(h.store.getLiveOwner(slot)).toEqual({ ptyId: 'gone', hostId: 'local' })
  })

  it('a count of rows retired answered by retireOwner reads as whether it retired the binding', async () => {
    const h = createHarness({ storeOverrides: (store) => ({ retireOwner: (s, expected) => (store.retireOwner(s, expected) === true ? 1 : 0) as unknown as boolean }) })
    const slot = { key: 'pane' }
    h.store.bindOwner(slot, { ptyId: 'gone', hostId: 'local' })
    const outcome = await h.spawn({ slot })
    expect(outcome.result.isReattach).toBe(false)
    expect(h.store.getLiveOwner(slot)).toMatchObject({ ptyId: outcome.result.id })
  })

  it('slot_owner_changed: the attach reply names another incarnation; the live owner is left running', async () => {
    const h = createHarness({
      providerOverrides: (provider) => ({
        spawn: async (options) => {
          const result = await provider.spawn(options)
          return options.attachOnly === true ? { ...result, incarnationId: toPtyIncarnationId('other') } : result
        },
      }),
    })
    const slot = { key: 'pane' }
    const first = await h.spawn({ slot })
    const error = await expectSpawnError(h.spawn({ slot }), 'slot_owner_changed')
    expect(error.outcome).toBe('not_started')
    expect(h.provider.livePtyIds()).toEqual([first.result.id])
    expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toEqual([])
  })

  it('slot_owner_unverified: an untyped attach failure proves nothing; the binding is kept', async () => {
    const timeout = new Error('attach timed out')
    const h = createHarness({
      providerOverrides: (provider) => ({
        spawn: (options) => (options.attachOnly === true ? Promise.reject(timeout) : provider.spawn(options)),
      }),
    })
    const slot = { key: 'pane' }
    const first = await h.spawn({ slot })
    const error = await expectSpawnError(h.spawn({ slot }), 'slot_owner_unverified')
    expect(error.cause).toBe(timeout)
    expect(h.store.getPersistedOwner(slot)?.ptyId).toBe(first.result.id)
    expect(h.provider.livePtyIds()).toEqual([first.result.id])
  })

  it('claim_conflict: the claim key is held in another scope', async () => {
    const h = createHarness()
    await h.spawn({ claim: { key: 'agent', scopeId: 'a' } })
    const error = await expectSpawnError(h.spawn({ claim: { key: 'agent', scopeId: 'b' } }), 'claim_conflict')
    expect(error.outcome).toBe('not_started')
    expect(h.provider.livePtyIds()).toHaveLength(1)
  })

  it('execution_owner_unavailable: no provider for the spawn host', async () => {
    const h = createHarness()
    const error = await expectSpawnError(h.spawn({ hostId: 'ssh:nowhere', sessionId: 's' }), 'execution_owner_unavailable')
    expect(error.outcome).toBe('not_started')
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it("execution_owner_unavailable: the claim's owner is on a host that became unreachable — unknown, never absent", async () => {
    const remote = createFakePtyProvider({ hostId: 'ssh:box', idPrefix: 'remote-' })
    const providers = new Map<string, PtyProvider>([['ssh:box', remote]])
    const claims = createClaimedOwnerRegistry()
    const deps = { resolveProvider: (hostId: string) => providers.get(hostId), runtime: createInMemoryPtyRuntime(), claims }
    const claim = { key: 'agent' }
    await executeRuntimePtySpawn(createRuntimePtySpawnState(deps, { claim, hostId: 'ssh:box' }))
    providers.delete('ssh:box')
    const error = await expectSpawnError(executeRuntimePtySpawn(createRuntimePtySpawnState(deps, { claim, hostId: 'ssh:box' })), 'execution_owner_unavailable')
    expect(error.outcome).toBe('not_started')
    expect(claims.owners()).toHaveLength(1)
    expect(remote.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
  })

  it('execution_owner_unavailable: past the registry cap', async () => {
    const h = createHarness()
    const claims = createClaimedOwnerRegistry({ maxEntries: 1 })
    const deps = { ...h.deps, claims }
    await executeRuntimePtySpawn(createRuntimePtySpawnState(deps, { claim: { key: 'one' } }))
    await expectSpawnError(executeRuntimePtySpawn(createRuntimePtySpawnState(deps, { claim: { key: 'two' } })), 'execution_owner_unavailable')
    expect(h.provider.livePtyIds()).toHaveLength(1)
  })

  it('provider_spawn_failed: the provider rejects; the original error is the cause', async () => {
    const h = createHarness()
    const failure = new Error('ENOENT: /bin/nope')
    h.provider.scriptNextSpawn({ fail: failure })
    const error = await expectSpawnError(h.spawn({ sessionId: 's', file: '/bin/nope' }), 'provider_spawn_failed')
    expect(error.cause).toBe(failure)
    expect(error.outcome).toBe('not_started')
    expect(error.ptyId).toBe('s')
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('provider_spawn_failed with processMayExist: the provider could not tell whether its launch went through, so the outcome is unknown', async () => {
    const h = createHarness()
    // A remote host that did not answer a spawn request it may have received (the pty host's timeout).
    const failure = Object.assign(new Error('The pty host did not answer spawn within 30000 ms'), { processMayExist: true })
    h.provider.scriptNextSpawn({ fail: failure })
    const error = await expectSpawnError(h.spawn({ sessionId: 's' }), 'provider_spawn_failed')
    expect(error.cause).toBe(failure)
    // Before: not_started — "no process was started", a guess the provider never made.
    expect(error.outcome).toBe('unknown')
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('provider_spawn_failed with processStarted: the provider started a process and stopped it again, so the outcome is rolled_back (unknown when it may still exist)', async () => {
    // An SSH spawn overtaken by the provider's disposal after its launch ran (helper-137).
    for (const [flags, outcome] of [
      [{ processStarted: true }, 'rolled_back'],
      [{ processStarted: true, processMayExist: true }, 'unknown'],
      [{ processStarted: 'yes' }, 'not_started'],
    ] as const) {
      const h = createHarness()
      const failure = Object.assign(new Error('The SSH provider was disposed while the spawn was in flight'), flags)
      h.provider.scriptNextSpawn({ fail: failure })
      const error = await expectSpawnError(h.spawn({ sessionId: 's' }), 'provider_spawn_failed')
      expect(error.cause).toBe(failure)
      expect(error.outcome, JSON.stringify(flags)).toBe(outcome)
      expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
    }
  })

  it('exited_during_start: the reply says the process already exited; it is stopped anyway and never registered', async () => {
    const h = createHarness()
    let committed = 0
    h.provider.scriptNextSpawn({ exitBeforeReply: { exitCode: 1 } })
    const error = await expectSpawnError(h.spawn({ onPtySpawnCommitted: () => { committed += 1 } }), 'exited_during_start')
    expect(error.outcome).toBe('rolled_back')
    expect(committed).toBe(1)
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('exited_during_start: an exit between the physical start and the reply, with no id to expect', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ hang: true })
    const spawning = h.spawn({})
    await h.provider.settle()
    const [id] = h.provider.livePtyIds()
    h.provider.emitExit(id ?? '', { exitCode: 0 })
    h.provider.releaseSpawn()
    await expectSpawnError(spawning, 'exited_during_start')
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('exited_during_start: the pipeline watches exits itself, for providers that do not flag exitedBeforeSpawnReply', async () => {
    const h = createHarness({
      providerOverrides: (provider) => ({
        spawn: async (options) => {
          const { exitedBeforeSpawnReply: _dropped, ...reply } = await provider.spawn(options)
          return reply
        },
      }),
    })
    h.provider.scriptNextSpawn({ hang: true })
    const spawning = h.spawn({})
    await h.provider.settle()
    const [id] = h.provider.livePtyIds()
    h.provider.emitExit(id ?? '', { exitCode: 0 })
    h.provider.releaseSpawn()
    const error = await expectSpawnError(spawning, 'exited_during_start')
    expect(error.ptyId).toBe(id)
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
    expect(h.provider.listenerCount()).toBe(1)
  })

  it('registration_refused: the admission gate refuses; the started PTY is shut down and onPtySpawnCommitted still fired once', async () => {
    const refusal = new Error('quota exceeded')
    const h = createHarness({ runtimeOverrides: () => ({ assertPtyRegistrationAllowed: () => { throw refusal } }) })
    let committed = 0
    const error = await expectSpawnError(h.spawn({ sessionId: 's', onPtySpawnCommitted: () => { committed += 1 } }), 'registration_refused')
    expect(error.cause).toBe(refusal)
    expect(error.outcome).toBe('rolled_back')
    expect(error.ptyId).toBe('s')
    expect(committed).toBe(1)
    expect(h.provider.livePtyIds()).toEqual([])
    const shutdown = h.provider.calls.find((call) => call.method === 'shutdown')
    expect(shutdown?.args).toEqual(['s', { immediate: true, expectedIncarnationId: h.provider.getPty('s')?.incarnationId }])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('commit_failed: binding the slot fails; the PTY is shut down and the sequence rebase undone', async () => {
    const h = createHarness({ storeOverrides: () => ({ bindOwner: () => { throw new Error('disk full') } }) })
    h.provider.scriptNextSpawn({ providerSequence: { value: 10, generation: 'continued' } })
    const error = await expectSpawnError(h.spawn({ slot: { key: 'pane' } }), 'commit_failed')
    expect(error.outcome).toBe('rolled_back')
    // Why: "Spawn failed at stage commit: disk full" named no slot.
    expect(error.message).toBe(`Slot "pane": the slot store's bindOwner failed for PTY ${JSON.stringify(error.ptyId)}: disk full`)
    expect(error.cause).toMatchObject({ message: 'disk full' })
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('commit_failed names the slot, its scope included, when bindOwner rejects; the PTY is shut down and the slot left unbound', async () => {
    const h = createHarness({ storeOverrides: () => ({ bindOwner: () => Promise.reject(new Error('disk full')) }) })
    const slot = { scopeId: 'ws', key: 'pane' }
    const error = await expectSpawnError(h.spawn({ slot, scopeId: 'ws' }), 'commit_failed')
    expect(error.message).toMatch(/^Slot "pane" of scope "ws": the slot store's bindOwner failed for PTY "[^"]+": disk full$/)
    expect(error.outcome).toBe('rolled_back')
    expect(h.provider.livePtyIds()).toEqual([])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
    expect(h.store.getLiveOwner(slot)).toBeNull()
  })

  it('an undo that retires the binding and throws names the slot too (before: "retire slot binding pty-1")', async () => {
    const h = createHarness({
      storeOverrides: () => ({ bindOwner: () => Promise.reject(new Error('disk full')), retireOwner: () => { throw new Error('db down') } }),
    })
    const error = await expectSpawnError(h.spawn({ slot: { scopeId: 'ws', key: 'pane' } }), 'commit_failed')
    expect(error.cause).toBeInstanceOf(AggregateError)
    expect((error.cause as AggregateError).message).toBe(`1 rollback step(s) failed after the spawn failed: retire the binding of Slot "pane" of scope "ws" to PTY ${JSON.stringify(error.ptyId)}: db down`)
    expect(h.provider.livePtyIds()).toEqual([])
  })

  it('outcome unknown when the rollback cannot stop the PTY; the failed undo joins the cause', async () => {
    const refusal = new Error('refused')
    const h = createHarness({ runtimeOverrides: () => ({ assertPtyRegistrationAllowed: () => { throw refusal } }) })
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const error = await expectSpawnError(h.spawn({ scopeId: 'w' }), 'registration_refused')
    expect(error.outcome).toBe('unknown')
    expect(error.cause).toBeInstanceOf(AggregateError)
    expect((error.cause as AggregateError).errors[0]).toBe(refusal)
    expect((error.cause as AggregateError).errors).toHaveLength(2)
    expect(h.runtime.inspect().heldLeases).toEqual([])
  })

  it('a provider option refusal keeps naming its option when an undo also throws', async () => {
    const refusal = Object.assign(new Error('no such cwd'), { code: 'invalid_spawn_option', option: 'cwd' })
    const h = createHarness({ runtimeOverrides: () => ({ acquireScopeSpawn: () => () => { throw new Error('undo failed') } }) })
    h.provider.scriptNextSpawn({ fail: refusal })
    const error = await expectSpawnError(h.spawn({ scopeId: 'w' }), 'invalid_spawn_options')
    expect(error.cause).toBeInstanceOf(AggregateError)
    expect((error.cause as AggregateError).errors[0]).toBe(refusal)
    expect(error.option).toBe('cwd')
  })

  it.each([
    ['slotKey', { slot: { key: 'pane' } }, 'slot.key'],
    ['claimKey', { claim: { key: 'agent' } }, 'claim.key'],
    ['scopeId', { slot: { key: 'pane', scopeId: 'w' } }, 'slot.scopeId'],
    ['scopeId', { claim: { key: 'agent', scopeId: 'w' } }, 'claim.scopeId'],
    ['scopeId', { scopeId: 'w', slot: { key: 'pane', scopeId: 'w' } }, 'scopeId'],
    ['cwd', { cwd: '/nope' }, 'cwd'],
  ] as const)('a provider refusing its option %s names the one the caller wrote (%j → %s)', async (providerOption, options, callerOption) => {
    const refusal = Object.assign(new Error(`refused ${providerOption}`), { code: 'invalid_spawn_option', option: providerOption, value: 'v' })
    const h = createHarness()
    h.provider.scriptNextSpawn({ fail: refusal })
    const error = await expectSpawnError(h.spawn(options as never), 'invalid_spawn_options')
    expect([error.option, error.value, error.outcome]).toEqual([callerOption, 'v', 'not_started'])
    expect(error.cause).toBe(refusal)
  })

  it("a joined claim that fails in its own admission never stops the creator's PTY nor releases its claim", async () => {
    const h = createHarness()
    const refusal = new Error('joiner refused')
    const joinerDeps = { ...h.deps, runtime: { ...h.runtime, assertPtyRegistrationAllowed: () => { throw refusal } } }
    const claim = { key: 'agent' }
    h.provider.scriptNextSpawn({ hang: true })
    const creating = h.spawn({ claim })
    await h.provider.settle()
    const joinerState = createRuntimePtySpawnState(joinerDeps, { claim })
    const joining = executeRuntimePtySpawn(joinerState)
    await h.provider.settle()
    h.provider.releaseSpawn()
    const created = await creating
    const error = await expectSpawnError(joining, 'registration_refused')
    expect(joinerState.joinedAnotherStart).toBe(true)
    expect(error.outcome).toBe('not_started')
    expect(error.ptyId).toBe(created.result.id)
    expect(h.provider.livePtyIds()).toEqual([created.result.id])
    expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toEqual([])
    expect(h.claims.owners().map((owner) => owner.ptyId)).toEqual([created.result.id])
    expect(h.runtime.inspect().registeredPtys.map((p) => p.ptyId)).toEqual([created.result.id])
    expect(h.runtime.inspect().pendingRegistrations).toEqual([])
  })

  it("a claim spawn that arrives while the creator rolls back does not join it: it waits for the PTY's stop, then starts its own (a review, 3 Dec)", async () => {
    let refuseNext = true
    const stopping: (() => void)[] = []
    const h = createHarness({
      runtimeOverrides: (runtime) => ({
        assertPtyRegistrationAllowed: (...args) => {
          if (refuseNext) {
            refuseNext = false
            throw new Error('quota exceeded')
          }
          return runtime.assertPtyRegistrationAllowed?.(...args)
        },
      }),
      // The rollback's stop of the creator's PTY takes a while.
      providerOverrides: (provider) => ({
        shutdown: (id, options) => new Promise<void>((resolve) => stopping.push(() => resolve(provider.shutdown(id, options)))),
      }),
    })
    const claim = { key: 'agent' }
    const creating = expectSpawnError(h.spawn({ claim }), 'registration_refused')
    await h.provider.settle()
    await vi.waitFor(() => expect(stopping).toHaveLength(1))
    const creatorPty = h.provider.livePtyIds()[0]
    const lateState = h.state({ claim })
    const late = executeRuntimePtySpawn(lateState)
    await h.provider.settle()
    // While the creator's PTY is being stopped, the late spawn starts nothing.
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
    stopping.shift()!()
    expect((await creating).outcome).toBe('rolled_back')
    const outcome = await late
    expect(outcome.claimDisposition).toBe('created')
    expect(lateState.joinedAnotherStart).toBe(false)
    expect(outcome.result.id).not.toBe(creatorPty)
    expect(h.provider.livePtyIds()).toEqual([outcome.result.id])
    expect(h.claims.owners().map((owner) => owner.ptyId)).toEqual([outcome.result.id])
  })

  it("a joiner gets the creator's code when the creator's spawn fails", async () => {
    const h = createHarness()
    const claim = { key: 'agent' }
    h.provider.scriptNextSpawn({ hang: true })
    const creating = h.spawn({ claim })
    await h.provider.settle()
    const joining = h.spawn({ claim })
    await h.provider.settle()
    const failure = new Error('fork failed')
    h.provider.failSpawn(undefined, failure)
    const [a, b] = await Promise.all([expectSpawnError(creating, 'provider_spawn_failed'), expectSpawnError(joining, 'provider_spawn_failed')])
    expect(a.cause).toBe(failure)
    expect(isPtySpawnError(b.cause) && b.cause.cause).toBe(failure)
    expect(h.claims.owners()).toEqual([])
    expect(h.runtime.inspect()).toEqual(EMPTY_RUNTIME)
  })

  it('an adopted claim that fails later leaves the live owner running and claimed', async () => {
    const h = createHarness()
    const claim = { key: 'agent' }
    const first = await h.spawn({ claim })
    const refusing = { ...h.deps, runtime: { ...h.runtime, preparePtyExecutionContext: () => { throw new Error('no context') } } }
    const error = await expectSpawnError(executeRuntimePtySpawn(createRuntimePtySpawnState(refusing, { claim })), 'commit_failed')
    expect(error.outcome).toBe('not_started')
    expect(h.provider.livePtyIds()).toEqual([first.result.id])
    expect(h.claims.owners().map((owner) => owner.ptyId)).toEqual([first.result.id])
  })
})
