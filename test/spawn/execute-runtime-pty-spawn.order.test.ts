import { describe, expect, it } from 'vitest'
import type { PtyProvider, PtySpawnOptions } from '../../src/contracts/index.js'
import {
  createClaimedOwnerRegistry,
  createInMemoryPtyRuntime,
  createInMemorySlotStore,
  createRuntimePtySpawnState,
  executeRuntimePtySpawn,
  type PtySpawnDeps,
} from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { PROVIDER_EFFECTS, recording, recordingRuntime, type LogEntry } from './harness.js'

/** Shared state (one provider, runtime, store, registry) with one recording log per caller. */
function world() {
  const provider = createFakePtyProvider({ scheduling: 'manual' })
  const runtime = createInMemoryPtyRuntime()
  const store = createInMemorySlotStore()
  const claims = createClaimedOwnerRegistry()
  provider.onExit((event) => runtime.notePtyExit(event.id, event.incarnationId))
  const caller = () => {
    const log: LogEntry[] = []
    const recordedProvider: PtyProvider = recording(provider, 'provider', log, PROVIDER_EFFECTS)
    const deps: PtySpawnDeps = {
      resolveProvider: (hostId) => (hostId === 'local' ? recordedProvider : undefined),
      runtime: recordingRuntime(runtime, log),
      store: recording(store, 'store', log),
      claims: recording(claims, 'claims', log, ['ensure', 'release']),
    }
    const spawn = (options: PtySpawnOptions) =>
      executeRuntimePtySpawn(
        createRuntimePtySpawnState(deps, { ...options, onPtySpawnCommitted: () => log.push(['committed']) }),
      )
    return { log, spawn }
  }
  return { provider, runtime, store, claims, caller }
}

const names = (log: LogEntry[]): string[] => log.map((entry) => entry[0])

describe('executeRuntimePtySpawn: order of side effects', () => {
  it('fresh spawn: lease, handle, pending, sequence, spawn, commit report, admission, rebase, context, register, then handle and lease released', async () => {
    const w = world()
    w.provider.scriptNextSpawn({ providerSequence: { value: 0, generation: 'reset' } })
    const a = w.caller()
    const outcome = await a.spawn({ sessionId: 'term-1', scopeId: 'ws', preAllocatedHandle: 'h-1', cols: 100, rows: 30, file: '/bin/sh' })
    const inc = outcome.result.incarnationId
    expect(a.log).toEqual([
      ['runtime.acquireScopeSpawn', 'ws'],
      ['runtime.admitHandle', 'h-1'],
      ['runtime.beginPtyRegistration', 'term-1', null],
      ['runtime.getPtyOutputSequence', 'term-1'],
      ['provider.spawn', expect.objectContaining({ sessionId: 'term-1', cols: 100, rows: 30, file: '/bin/sh', scopeId: 'ws' })],
      ['committed'],
      ['runtime.assertPtyRegistrationAllowed', 'term-1', inc],
      ['runtime.synchronizePtyOutputSequenceFromProvider', 'term-1', { value: 0, generation: 'reset' }, 0],
      ['runtime.preparePtyExecutionContext', 'term-1', { hostId: 'local' }],
      ['runtime.commitPtyRegistration', 'term-1', inc],
      ['runtime.revokeHandle', 'h-1'],
      ['lease.release', 'ws'],
    ])
    expect(w.runtime.inspect()).toMatchObject({
      heldLeases: [],
      pendingRegistrations: [],
      admittedHandles: [],
      registeredPtys: [{ ptyId: 'term-1', incarnationId: inc }],
    })
  })

  it('slot re-attach: owner resolved from both views, attach-only with launch fields cleared, then the slot is re-bound before registration; no commit report', async () => {
    const w = world()
    const slot = { scopeId: 'ws', key: 'pane-1' }
    const first = await w.caller().spawn({ slot, scopeId: 'ws', file: '/bin/zsh', command: 'make' })
    const owner = first.result
    const b = w.caller()
    const outcome = await b.spawn({ slot, scopeId: 'ws', cols: 90, rows: 20, file: '/bin/zsh', command: 'make', env: { A: '1' } })
    expect(outcome.result).toMatchObject({ id: owner.id, incarnationId: owner.incarnationId, isReattach: true })
    expect(names(b.log)).toEqual([
      'runtime.acquireScopeSpawn',
      'store.getLiveOwner',
      'store.getPersistedOwner',
      'runtime.beginPtyRegistration',
      'runtime.getPtyOutputSequence',
      'provider.spawn',
      // No 'committed': a re-attach starts no process (seed rule 11.11).
      'runtime.assertPtyRegistrationAllowed',
      'runtime.synchronizePtyOutputSequenceFromProvider',
      'runtime.preparePtyExecutionContext',
      'store.bindOwner',
      'runtime.commitPtyRegistration',
      'lease.release',
    ])
    const attach = b.log.find((entry) => entry[0] === 'provider.spawn')?.[1]
    expect(attach).toEqual({ sessionId: owner.id, attachOnly: true, expectedIncarnationId: owner.incarnationId, cols: 90, rows: 20 })
    expect(b.log.find((entry) => entry[0] === 'runtime.beginPtyRegistration')).toEqual(['runtime.beginPtyRegistration', owner.id, null])
    expect(w.provider.livePtyIds()).toEqual([owner.id])
  })

  it('adopted claim: ensure re-proves the live owner; the pending registration is begun for the owner after the ensure', async () => {
    const w = world()
    const claim = { key: 'agent-7', scopeId: 'ws' }
    const first = await w.caller().spawn({ claim, scopeId: 'ws' })
    const b = w.caller()
    const outcome = await b.spawn({ claim, scopeId: 'ws' })
    expect(outcome.claimDisposition).toBe('adopted')
    expect(outcome.result).toEqual({ id: first.result.id, isReattach: true, incarnationId: first.result.incarnationId, pid: first.result.pid })
    expect(names(b.log)).toEqual([
      'runtime.acquireScopeSpawn',
      'claims.ensure',
      // No 'committed': adopting an owner starts no process (seed rule 11.11).
      'runtime.beginPtyRegistration',
      'runtime.assertPtyRegistrationAllowed',
      'runtime.preparePtyExecutionContext',
      'runtime.commitPtyRegistration',
      'lease.release',
    ])
    expect(b.log.some((entry) => entry[0] === 'provider.spawn')).toBe(false)
    expect(w.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
  })

  it('joined claim: the joiner waits for the creator and publishes the same PTY without a spawn of its own', async () => {
    const w = world()
    const claim = { key: 'agent-8' }
    w.provider.scriptNextSpawn({ hang: true })
    const a = w.caller()
    const b = w.caller()
    const creating = a.spawn({ claim })
    await w.provider.settle()
    const joining = b.spawn({ claim })
    await w.provider.settle()
    expect(names(b.log)).toEqual(['runtime.acquireScopeSpawn', 'claims.ensure'])
    w.provider.releaseSpawn()
    const [created, joined] = await Promise.all([creating, joining])
    expect(created.claimDisposition).toBe('created')
    expect(joined.claimDisposition).toBe('adopted')
    expect(joined.result.id).toBe(created.result.id)
    expect(names(a.log)).toEqual([
      'runtime.acquireScopeSpawn',
      'claims.ensure',
      'provider.spawn',
      'committed',
      'runtime.beginPtyRegistration',
      'runtime.assertPtyRegistrationAllowed',
      'runtime.synchronizePtyOutputSequenceFromProvider',
      'runtime.preparePtyExecutionContext',
      'runtime.commitPtyRegistration',
      'lease.release',
    ])
    expect(names(b.log)).toEqual([
      'runtime.acquireScopeSpawn',
      'claims.ensure',
      // No 'committed': adopting an owner starts no process (seed rule 11.11).
      'runtime.beginPtyRegistration',
      'runtime.assertPtyRegistrationAllowed',
      'runtime.preparePtyExecutionContext',
      'runtime.commitPtyRegistration',
      'lease.release',
    ])
    expect(w.runtime.inspect().pendingRegistrations).toEqual([])
    expect(w.runtime.inspect().registeredPtys).toEqual([{ ptyId: created.result.id, incarnationId: created.result.incarnationId }])
  })

  it('a spawn waits behind an exclusive maintenance holder of its scope; a sibling scope does not', async () => {
    const w = world()
    const releaseMaintenance = await w.runtime.acquireScopeExclusive('ws')
    const blocked = w.caller()
    const spawning = blocked.spawn({ scopeId: 'ws' })
    const sibling = await w.caller().spawn({ scopeId: 'other' })
    expect(sibling.result.id).toBeDefined()
    await w.provider.settle()
    expect(names(blocked.log)).toEqual(['runtime.acquireScopeSpawn'])
    releaseMaintenance()
    const outcome = await spawning
    expect(w.runtime.isPtyRegistered(outcome.result.id)).toBe(true)
    expect(w.runtime.inspect().heldLeases).toEqual([])
  })

  it('a lease granted at once adds no turn: the provider is called in the caller\'s turn, and a lease answered later is waited for', async () => {
    const w = world()
    const quick = w.caller()
    const spawning = quick.spawn({ scopeId: 'ws', sessionId: 'quick' })
    // Synchronously, before any microtask: every stage up to the physical call already ran (and
    // the fake provider reports the commit as it forks).
    expect(names(quick.log)).toEqual([
      'runtime.acquireScopeSpawn',
      'runtime.beginPtyRegistration',
      'runtime.getPtyOutputSequence',
      'provider.spawn',
      'committed',
    ])
    const outcome = await spawning
    expect(w.runtime.isPtyRegistered(outcome.result.id)).toBe(true)

    const releaseMaintenance = await w.runtime.acquireScopeExclusive('ws')
    const late = w.caller()
    const waiting = late.spawn({ scopeId: 'ws', sessionId: 'late' })
    expect(names(late.log)).toEqual(['runtime.acquireScopeSpawn'])
    releaseMaintenance()
    const lateOutcome = await waiting
    expect(names(late.log).slice(0, 4)).toEqual(['runtime.acquireScopeSpawn', 'runtime.beginPtyRegistration', 'runtime.getPtyOutputSequence', 'provider.spawn'])
    expect(w.runtime.isPtyRegistered(lateOutcome.result.id)).toBe(true)
    expect(w.runtime.inspect().heldLeases).toEqual([])
  })
})
