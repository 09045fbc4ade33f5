/**
 * The seed's meaning of each controller and pipeline member, in the order of issue 11 ("Seed-
 * faithful semantics"): one `describe` per rule, named by it. A host that ports code from the seed
 * origin relies on each of these answers.
 *
 * The stop rules (11.1 for `stopAndWait`, 11.9 and 11.10) live in `test/seed-semantics.stop.test.ts`.
 * Issue 13 item 9 (a commit hook that throws after the start) closes this file.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { PtyProcessInfo, PtyProvider, WriteSettlement } from '../src/contracts/index.js'
import { PROVIDER_ANSWER_MARGIN_MS } from '../src/contracts/deadline.js'
import { createPtyController, isPtyControllerError, type PtyController } from '../src/controller/index.js'
import { createNodePtyProvider, type NodePtyProvider } from '../src/node-pty/index.js'
import { createClaimedOwnerRegistry, createInMemorySlotStore, isPtySpawnError } from '../src/spawn/index.js'
import { createFakePtyProvider, type FakePtyProvider } from '../src/testing/index.js'
import { isDead } from './node-pty/pty-test-support.js'
import { rejectionOf } from './spawn/harness.js'

/** A fake provider whose listing answers only on a later macrotask (like a remote host). */
function slowListing(provider: FakePtyProvider, delayMs: number): PtyProvider {
  const listProcesses = provider.listProcesses.bind(provider)
  return Object.assign(Object.create(provider) as FakePtyProvider, {
    listProcesses: (options?: Parameters<PtyProvider['listProcesses']>[0]) =>
      new Promise<PtyProcessInfo[]>((resolve, reject) => {
        setTimeout(() => listProcesses(options).then(resolve, reject), delayMs)
      }),
  })
}

/** A provider (over a fake) whose listing never answers. */
function hungListing(provider: FakePtyProvider): PtyProvider & { listCalls: number } {
  const hung = Object.assign(Object.create(provider) as FakePtyProvider, {
    listCalls: 0,
    listProcesses: () => {
      hung.listCalls += 1
      return new Promise<PtyProcessInfo[]>(() => undefined)
    },
  })
  return hung
}

const controllers: PtyController[] = []
function track(controller: PtyController): PtyController {
  controllers.push(controller)
  return controller
}
const nodePtyProviders: NodePtyProvider[] = []
afterAll(async () => {
  await Promise.all(controllers.map((controller) => controller.dispose()))
  await Promise.all(nodePtyProviders.map((provider) => provider.dispose()))
})

describe('11.1 listing deadlines are points in time (deadlineMs absolute, timeoutMs relative)', () => {
  it('an absolute deadline 5 s ahead lets a slow host answer (it used to overflow and give up at once)', async () => {
    const fake = createFakePtyProvider()
    const controller = track(createPtyController({ provider: slowListing(fake, 20) }))
    const { id } = await controller.spawn({})
    const rows = await controller.listProcesses('local', { deadlineMs: Date.now() + 5_000 })
    expect(rows.map((row) => row.id)).toEqual([id])
    const scoped = await controller.listProcessesWithHostScope({ deadlineMs: Date.now() + 5_000 })
    expect(scoped.hostIds).toEqual(['local'])
  })

  it('the provider is handed the absolute deadline', async () => {
    const fake = createFakePtyProvider()
    const controller = track(createPtyController({ provider: fake }))
    const deadlineMs = Date.now() + 5_000
    await controller.listProcesses('local', { deadlineMs })
    const call = fake.calls.filter((entry) => entry.method === 'listProcesses').at(-1)
    // The caller's point in time, less a margin (at most 50 ms) for the provider's answer to arrive.
    const handed = (call?.args[0] as { deadlineMs: number }).deadlineMs
    expect(handed).toBeLessThan(deadlineMs)
    expect(handed).toBeGreaterThanOrEqual(deadlineMs - PROVIDER_ANSWER_MARGIN_MS)
    await controller.listProcesses('local', { timeoutMs: 5_000 })
    const relative = fake.calls.filter((entry) => entry.method === 'listProcesses').at(-1)?.args[0] as { deadlineMs: number }
    expect(relative.deadlineMs).toBeGreaterThan(Date.now())
  })

  it('a past deadline asks once and does not wait', async () => {
    const fake = createFakePtyProvider()
    const controller = track(createPtyController({ provider: fake }))
    const { id } = await controller.spawn({})
    fake.clearCalls()
    await expect(controller.listProcesses('local', { deadlineMs: Date.now() - 1 })).resolves.toMatchObject([{ id }])
    expect(fake.calls.filter((entry) => entry.method === 'listProcesses')).toHaveLength(1)
    const hung = hungListing(createFakePtyProvider())
    const overHung = track(createPtyController({ provider: hung }))
    const error = await rejectionOf(overHung.listProcesses('local', { deadlineMs: Date.now() - 1 }))
    expect(isPtyControllerError(error) && error.code).toBe('listing_failed')
    expect(hung.listCalls).toBe(1)
  })

  it('both forms, or a non-finite value, are a TypeError naming the option', async () => {
    const controller = track(createPtyController({ provider: createFakePtyProvider() }))
    await expect(controller.listProcesses('local', { deadlineMs: Date.now(), timeoutMs: 5 })).rejects.toThrow(TypeError)
    await expect(controller.listProcessesWithHostScope({ deadlineMs: Number.NaN })).rejects.toThrow(/`deadlineMs` option/)
    await expect(controller.listProcesses(undefined, { timeoutMs: Infinity })).rejects.toThrow(/`timeoutMs` option/)
  })

  it('an aborted listing settles (host missing), never hangs; an already-aborted one asks nobody', async () => {
    const local = createFakePtyProvider()
    const remote = hungListing(createFakePtyProvider({ hostId: 'ssh:box' }))
    const controller = track(createPtyController({ providers: { local, 'ssh:box': remote } }))
    const abort = new AbortController()
    const scoped = controller.listProcessesWithHostScope({ signal: abort.signal, timeoutMs: 60_000 })
    setTimeout(() => abort.abort(), 5)
    await expect(scoped).resolves.toEqual({ processes: [], hostIds: ['local'] })
    const single = controller.listProcesses('ssh:box', { signal: abort.signal })
    await expect(single).rejects.toMatchObject({ code: 'listing_failed' })
    expect(remote.listCalls).toBe(1)
  })
})

describe('11.2 listProcesses(null) is the local host', () => {
  it('lists the local provider, as the seed origin maps a missing host id to it', async () => {
    const local = createFakePtyProvider()
    const remote = createFakePtyProvider({ hostId: 'ssh:box', idPrefix: 'remote-' })
    const controller = track(createPtyController({ providers: { local, 'ssh:box': remote } }))
    const { id } = await controller.spawn({})
    await controller.spawn({ hostId: 'ssh:box' })
    const rows = await controller.listProcesses(null)
    expect(rows.map((row) => [row.id, row.hostId])).toEqual([[id, 'local']])
  })
})

describe('11.3 listProcessesWithHostScope: a failed local host rejects; a failed remote host is left out and its PTYs become unverifiable', () => {
  it('rejects when the local listing fails', async () => {
    const local = createFakePtyProvider()
    const controller = track(createPtyController({ providers: { local, 'ssh:box': createFakePtyProvider({ hostId: 'ssh:box' }) } }))
    local.setListingFailure(new Error('local listing broke'))
    const error = await rejectionOf(controller.listProcessesWithHostScope())
    expect(isPtyControllerError(error) && error.code).toBe('listing_failed')
    await expect(controller.listProcesses()).rejects.toMatchObject({ code: 'listing_failed' })
  })

  it('leaves a failed remote host out and marks its tracked PTYs unverifiable, never dead', async () => {
    const local = createFakePtyProvider()
    const remote = createFakePtyProvider({ hostId: 'ssh:box', idPrefix: 'remote-' })
    const controller = track(createPtyController({ providers: { local, 'ssh:box': remote } }))
    const verdicts: { ptyId: string; kind: string; reason?: string }[] = []
    controller.on('liveness', ({ ptyId, verdict }) =>
      verdicts.push({ ptyId, kind: verdict.kind, ...(verdict.kind === 'unverifiable' ? { reason: verdict.reason } : {}) }),
    )
    const onLocal = await controller.spawn({})
    const onRemote = await controller.spawn({ hostId: 'ssh:box' })
    remote.setListingFailure(new Error('ssh down'))
    const scoped = await controller.listProcessesWithHostScope()
    expect(scoped.hostIds).toEqual(['local'])
    expect(scoped.processes.map((row) => row.id)).toEqual([onLocal.id])
    expect(verdicts).toEqual([{ ptyId: onRemote.id, kind: 'unverifiable', reason: 'host_listing_failed' }])
    expect(controller.hasPty(onRemote.id)).not.toBe(false)
  })
})

describe('11.4 inventory().queriedHostIds holds only hosts that answered', () => {
  it('is empty before any listing, then names the hosts whose latest listing answered', async () => {
    const local = createFakePtyProvider()
    const remote = createFakePtyProvider({ hostId: 'ssh:box', idPrefix: 'remote-' })
    const controller = track(createPtyController({ providers: { local, 'ssh:box': remote } }))
    await controller.spawn({})
    expect([...controller.inventory().queriedHostIds]).toEqual([])
    remote.setListingFailure(new Error('ssh down'))
    await controller.listProcessesWithHostScope()
    expect([...controller.inventory().queriedHostIds]).toEqual(['local'])
    remote.setListingFailure(undefined)
    await controller.listProcessesWithHostScope()
    expect([...controller.inventory().queriedHostIds].sort()).toEqual(['local', 'ssh:box'])
    remote.setListingFailure(new Error('down again'))
    await controller.listProcesses()
    expect([...controller.inventory().queriedHostIds]).toEqual(['local'])
  })
})

/** A provider over a fake whose `write` answers whatever the test sets (sync or async). */
function scriptedWrites(fake: FakePtyProvider): PtyProvider & { answer: unknown } {
  const provider = Object.assign(Object.create(fake) as FakePtyProvider, {
    answer: undefined as unknown,
    write: (id: string, data: string) => {
      fake.write(id, data)
      return provider.answer as WriteSettlement
    },
  })
  return provider
}

describe('11.5 write() is true when bytes were handed over', () => {
  it('answers true while an asynchronous settlement is still pending (a retry on false would type twice)', async () => {
    const fake = createFakePtyProvider()
    const provider = scriptedWrites(fake)
    const controller = track(createPtyController({ provider }))
    const { id } = await controller.spawn({})
    let settle: (value: WriteSettlement) => void = () => undefined
    provider.answer = new Promise<WriteSettlement>((resolve) => {
      settle = resolve
    })
    expect(controller.write(id, 'ls\r', 'driving')).toBe(true)
    expect(fake.getPty(id)?.writes.map((write) => write.data)).toEqual(['ls\r'])
    settle({ kind: 'accepted' })
    provider.answer = { kind: 'refused', reason: 'provider_refused_write' }
    expect(controller.write(id, 'x', 'driving')).toBe(false)
  })
})

describe('11.6 a provider write answer that is not a WriteSettlement is read as the seed reads a boolean', () => {
  it('false is refused(provider_refused_write), true is accepted, anything else unverifiable with bytes handed over; never a throw', async () => {
    const provider = scriptedWrites(createFakePtyProvider())
    const controller = track(createPtyController({ provider }))
    const { id } = await controller.spawn({})
    const cases: [unknown, WriteSettlement][] = [
      [false, { kind: 'refused', reason: 'provider_refused_write' }],
      [true, { kind: 'accepted' }],
      [undefined, { kind: 'unverifiable', reason: 'provider_threw_after_handoff', bytesHandedToTransport: true }],
      [{ kind: 'bogus' }, { kind: 'unverifiable', reason: 'provider_threw_after_handoff', bytesHandedToTransport: true }],
      [{ kind: 'refused', reason: 'made_up' }, { kind: 'unverifiable', reason: 'provider_threw_after_handoff', bytesHandedToTransport: true }],
    ]
    for (const [answer, expected] of cases) {
      provider.answer = answer
      expect(controller.writeWithSettlement(id, 'x', 'driving')).toEqual(expected)
      provider.answer = Promise.resolve(answer)
      await expect(controller.writeWithSettlement(id, 'x', 'driving')).resolves.toEqual(expected)
    }
    provider.answer = false
    expect(controller.write(id, 'x', 'driving')).toBe(false)
  })
})

describe('11.7 hasPty(id) is null when the owning provider has no hasPty', () => {
  it('does not answer true from the controller’s own record', async () => {
    const fake = createFakePtyProvider()
    const provider = Object.assign(Object.create(fake) as FakePtyProvider, { hasPty: undefined })
    const controller = track(createPtyController({ provider }))
    const { id } = await controller.spawn({})
    expect(controller.hasPty(id)).toBeNull()
    fake.emitExit(id, { exitCode: 0 })
    expect(controller.hasPty(id)).toBe(false)
  })
})

describe('11.8 once a PTY’s incarnation is known, events naming no incarnation are dropped', () => {
  it('a late exit without an incarnation does not end the live process’s record; data without one is not delivered', async () => {
    const fake = createFakePtyProvider()
    const exitListeners: ((event: { id: string; code: number }) => void)[] = []
    const dataListeners: ((event: { id: string; data: string }) => void)[] = []
    const provider = Object.assign(Object.create(fake) as FakePtyProvider, {
      onExit: (listener: (event: { id: string; code: number }) => void) => {
        exitListeners.push(listener)
        return fake.onExit(listener)
      },
      onData: (listener: (event: { id: string; data: string }) => void) => {
        dataListeners.push(listener)
        return fake.onData(listener)
      },
    })
    const controller = track(createPtyController({ provider }))
    const exits: unknown[] = []
    const data: string[] = []
    controller.on('exit', (event) => exits.push(event))
    controller.on('data', (event) => data.push(event.data))
    const { id, incarnationId } = await controller.spawn({})
    expect(incarnationId).toBeDefined()
    for (const listener of dataListeners) listener({ id, data: 'stale output' })
    for (const listener of exitListeners) listener({ id, code: 137 })
    expect(exits).toEqual([])
    expect(data).toEqual([])
    expect(controller.write(id, 'still here', 'driving')).toBe(true)
    fake.emitData(id, 'real output')
    fake.emitExit(id, { exitCode: 3 })
    expect(data).toEqual(['real output'])
    expect(exits).toMatchObject([{ ptyId: id, incarnationId, code: 3 }])
  })
})

describe('11.11 onPtySpawnCommitted fires only when a process was actually started', () => {
  it('fires for a fresh spawn, not for a slot re-attach or a claim adoption', async () => {
    const provider = createFakePtyProvider()
    const controller = track(createPtyController({ provider }))
    let commits = 0
    const onPtySpawnCommitted = (): void => {
      commits += 1
    }
    const slot = { key: 'pane-1' }
    const first = await controller.spawn({ slot, onPtySpawnCommitted })
    expect(commits).toBe(1)
    const again = await controller.spawn({ slot, onPtySpawnCommitted })
    expect(again).toMatchObject({ id: first.id, isReattach: true })
    expect(commits).toBe(1)
    const claim = { key: 'agent-1' }
    await controller.spawn({ claim, onPtySpawnCommitted })
    expect(commits).toBe(2)
    const adopted = await controller.spawn({ claim, onPtySpawnCommitted })
    expect(adopted.claimDisposition).toBe('adopted')
    expect(commits).toBe(2)
    expect(provider.livePtyIds()).toHaveLength(2)
  })
})

describe('11.12 a slot owner live under another incarnation is slot_owner_unverified, and no second process starts', () => {
  it('fake provider: the live owner is left alone and nothing is spawned', async () => {
    const provider = createFakePtyProvider()
    const store = createInMemorySlotStore()
    const controller = track(createPtyController({ provider, store }))
    const live = await provider.spawn({ sessionId: 'owner' })
    const slot = { key: 'pane' }
    store.bindOwner(slot, { ptyId: 'owner', hostId: 'local', incarnationId: 'older' as never })
    const error = await rejectionOf(controller.spawn({ slot }))
    expect(isPtySpawnError(error) && error.code).toBe('slot_owner_unverified')
    expect(isPtySpawnError(error) && error.outcome).toBe('not_started')
    expect(provider.livePtyIds()).toEqual(['owner'])
    expect(provider.getPty('owner')?.incarnationId).toBe(live.incarnationId)
    expect(store.getLiveOwner(slot)).toMatchObject({ ptyId: 'owner' })
  })

  it('real node-pty provider: the same refusal, and the provider still holds exactly one process', async () => {
    const provider = createNodePtyProvider()
    nodePtyProviders.push(provider)
    const store = createInMemorySlotStore()
    const controller = track(createPtyController({ provider, store }))
    const live = await provider.spawn({ sessionId: 'node-owner', file: '/bin/cat' })
    const slot = { key: 'node-pane' }
    store.bindOwner(slot, { ptyId: 'node-owner', hostId: 'local', incarnationId: 'older' as never })
    const error = await rejectionOf(controller.spawn({ slot, file: '/bin/cat' }))
    expect(isPtySpawnError(error) && error.code).toBe('slot_owner_unverified')
    const rows = await provider.listProcesses()
    expect(rows.map((row) => [row.id, row.pid])).toEqual([['node-owner', live.pid]])
    expect(isDead(live.pid!)).toBe(false)
  })
})

describe('11.13 a claim imports proven owners from the hosts’ listings first, and fails closed', () => {
  it('a second controller over the same provider adopts the live owner instead of starting another', async () => {
    const provider = createFakePtyProvider()
    const first = track(createPtyController({ provider }))
    const owner = await first.spawn({ claim: { key: 'agent-7', scopeId: 'ws' } })
    const second = track(createPtyController({ provider, claims: createClaimedOwnerRegistry() }))
    const reply = await second.spawn({ claim: { key: 'agent-7', scopeId: 'ws' } })
    expect(reply).toMatchObject({ id: owner.id, incarnationId: owner.incarnationId, claimDisposition: 'adopted', isReattach: true })
    expect(provider.livePtyIds()).toEqual([owner.id])
  })

  it('same with a non-authoritative provider: the listed incarnation is the exact match it needs', async () => {
    const provider = createFakePtyProvider({ authoritativeListings: false })
    const owner = await track(createPtyController({ provider })).spawn({ claim: { key: 'agent-8' } })
    const reply = await track(createPtyController({ provider })).spawn({ claim: { key: 'agent-8' } })
    expect(reply).toMatchObject({ id: owner.id, claimDisposition: 'adopted' })
    expect(provider.livePtyIds()).toEqual([owner.id])
  })

  it('reads only the hosts’ membership: a host whose full rows (cwd, title) never come still decides claims', async () => {
    const provider = createFakePtyProvider()
    const owner = await track(createPtyController({ provider })).spawn({ claim: { key: 'agent-11', scopeId: 'ws' } })
    // Full rows hang, as node-pty's `/proc` reads did behind a burst of synchronous forks; the
    // identity a claim reads is known at once.
    const fullRowsHang = Object.assign(Object.create(provider) as FakePtyProvider, {
      listProcesses: (options?: Parameters<PtyProvider['listProcesses']>[0]) =>
        options?.membershipOnly === true ? provider.listProcesses(options) : new Promise<PtyProcessInfo[]>(() => undefined),
    })
    const second = track(createPtyController({ provider: fullRowsHang, claims: createClaimedOwnerRegistry() }))
    // Before: the import and the re-proof each waited out their 5 s budget, then claim_ownership_unknown.
    const reply = await second.spawn({ claim: { key: 'agent-11', scopeId: 'ws' } })
    expect(reply).toMatchObject({ id: owner.id, incarnationId: owner.incarnationId, claimDisposition: 'adopted' })
    expect(provider.livePtyIds()).toEqual([owner.id])
  })

  it('a listing failure fails closed with claim_ownership_unknown and starts nothing', async () => {
    const local = createFakePtyProvider()
    const remote = createFakePtyProvider({ hostId: 'ssh:box' })
    const controller = track(createPtyController({ providers: { local, 'ssh:box': remote } }))
    remote.setListingFailure(new Error('ssh down'))
    const error = await rejectionOf(controller.spawn({ claim: { key: 'agent-9' } }))
    expect(isPtySpawnError(error) && error.code).toBe('claim_ownership_unknown')
    expect(isPtySpawnError(error) && error.outcome).toBe('not_started')
    expect(local.livePtyIds()).toEqual([])
  })

  it('a known owner missing from its host’s listing is not live (false, not an error): a fresh owner starts', async () => {
    const provider = createFakePtyProvider({ authoritativeListings: false })
    const controller = track(createPtyController({ provider }))
    const first = await controller.spawn({ claim: { key: 'agent-10' } })
    // The host lost the process without reporting it: the listing no longer has the row.
    Object.assign(provider, { listProcesses: () => Promise.resolve([]) })
    const second = await controller.spawn({ claim: { key: 'agent-10' } })
    expect(second.claimDisposition).toBe('created')
    expect(second.id).not.toBe(first.id)
  })
})

describe('issue 13.9 a spawn whose onPtySpawnCommitted throws after the process started is rolled_back', () => {
  it('real node-pty provider: the error says rolled_back and the process is gone', async () => {
    const provider = createNodePtyProvider()
    nodePtyProviders.push(provider)
    const controller = track(createPtyController({ provider }))
    let started = 0
    const error = await rejectionOf(
      controller.spawn({
        file: '/bin/cat',
        onPtySpawnCommitted: () => {
          started += 1
          throw new Error('the host could not record the launch')
        },
      }),
    )
    expect(started).toBe(1)
    expect(isPtySpawnError(error) && error.outcome).toBe('rolled_back')
    expect(isPtySpawnError(error) && error.code).toBe('commit_failed')
    expect((error as Error).cause).toMatchObject({ message: 'the host could not record the launch' })
    expect(await provider.listProcesses()).toEqual([])
  })

  it('fake provider: the same outcome', async () => {
    const provider = createFakePtyProvider()
    const controller = track(createPtyController({ provider }))
    const error = await rejectionOf(
      controller.spawn({
        onPtySpawnCommitted: () => {
          throw new Error('nope')
        },
      }),
    )
    expect(isPtySpawnError(error) && error.outcome).toBe('rolled_back')
    expect(provider.livePtyIds()).toEqual([])
  })
})
