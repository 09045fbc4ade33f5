import { describe, expect, it } from 'vitest'
import {
  MAX_PTY_DIMENSION,
  refusedWrite,
  toPtyIncarnationId,
  unverifiableWrite,
  type PtyProvider,
  type WriteSettlement,
} from '../../src/contracts/index.js'
import { createPtyController, isPtyControllerError, PTY_LIVENESS_REASONS } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createHarness } from './controller-harness.js'

describe('writes', () => {
  it('accepts a write to a live PTY and hands the bytes to its provider', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    expect(h.controller.write(id, 'ls\r', 'driving')).toBe(true)
    expect(h.controller.writeWithSettlement(id, 'pwd\r', 'launch')).toEqual({ kind: 'accepted' })
    expect(h.provider.getPty(id)?.written).toBe('ls\rpwd\r')
  })

  it('refuses writes to unknown, exited and fenced PTYs without touching the provider', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    expect(h.controller.writeWithSettlement(id, 'x', 'driving', { expectedIncarnationId: toPtyIncarnationId('old') })).toEqual(
      refusedWrite('stale_incarnation'),
    )
    h.provider.emitExit(id, { exitCode: 0 })
    h.provider.clearCalls()
    expect(h.controller.writeWithSettlement(id, 'x', 'driving')).toEqual(refusedWrite('pty_exited'))
    expect(h.controller.write(id, 'x', 'driving')).toBe(false)
    expect(h.controller.writeWithSettlement('nope', 'x', 'driving')).toEqual(refusedWrite('pty_not_found'))
    expect(h.provider.calls.filter((call) => call.method === 'write')).toEqual([])
  })

  it('refuses writes once a stop went unverified (the exit was published)', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    await h.settle()
    expect(h.controller.writeWithSettlement(id, 'x', 'driving')).toEqual(refusedWrite('pty_exited'))
  })

  it.each<[string, WriteSettlement]>([
    ['refused', refusedWrite('provider_refused_write')],
    ['unverifiable', unverifiableWrite('transport_lost', false)],
  ])('passes a %s settlement through, and write() flattens it to false', async (_name, settlement) => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ writeSettlement: settlement })
    const { id } = await h.controller.spawn({})
    expect(h.controller.writeWithSettlement(id, 'x', 'driving')).toEqual(settlement)
    expect(h.controller.write(id, 'x', 'driving')).toBe(false)
  })

  it('turns a throwing provider write into unverifiable(provider_threw_after_handoff, true)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.write = () => {
      throw new Error('socket closed')
    }
    expect(h.controller.writeWithSettlement(id, 'x', 'driving')).toEqual(
      unverifiableWrite('provider_threw_after_handoff', true),
    )
    expect(h.controller.write(id, 'x', 'driving')).toBe(false)
    expect(h.errors().map((error) => error.code)).toEqual(['provider_threw', 'provider_threw'])
  })

  it('returns an async settlement as a promise, and write() answers true once the bytes were handed over (seed rule 11.5)', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    let reject = false
    const provider: PtyProvider = {
      ...fake,
      name: 'remote',
      authoritativeListings: true,
      write: async (id, data) => {
        if (reject) throw new Error('lost')
        return fake.write(id, data)
      },
      onData: (listener) => fake.onData(listener),
      onExit: (listener) => fake.onExit(listener),
      spawn: (options) => fake.spawn(options),
    }
    const controller = createPtyController({ provider, clock: createManualClock() })
    const { id } = await controller.spawn({})
    await expect(controller.writeWithSettlement(id, 'x', 'driving')).resolves.toEqual({ kind: 'accepted' })
    expect(controller.write(id, 'y', 'driving')).toBe(true)
    reject = true
    await expect(controller.writeWithSettlement(id, 'z', 'driving')).resolves.toEqual(
      unverifiableWrite('provider_threw_after_handoff', true),
    )
  })

  it('rejects a bad input kind or non-string data with a TypeError naming it', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    expect(() => h.controller.write(id, 'x', 'typing' as never)).toThrow(
      "Expected the `inputKind` argument to be 'driving', 'launch' or 'query-reply', got \"typing\" (string)",
    )
    expect(() => h.controller.write(id, 42 as never, 'driving')).toThrow('Expected the `data` argument to be a string or a Uint8Array (a Buffer is one), got 42 (number)')
  })
})

describe('size', () => {
  it('resizes a live PTY and reads the size back', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({ cols: 100, rows: 30 })
    expect(h.controller.getSize(id)).toEqual({ cols: 100, rows: 30 })
    expect(h.controller.resize(id, 120, 40)).toBe(true)
    expect(h.controller.getSize(id)).toEqual({ cols: 120, rows: 40 })
    expect(h.provider.getPty(id)).toMatchObject({ cols: 120, rows: 40 })
  })

  it('answers false / null for unknown and exited PTYs', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 0 })
    expect(h.controller.resize(id, 10, 10)).toBe(false)
    expect(h.controller.resize('nope', 10, 10)).toBe(false)
    expect(h.controller.getSize(id)).toBeNull()
  })

  it.each([0, -1, 1.5, Number.NaN])('rejects cols %s with a TypeError naming the option', async (cols) => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    expect(() => h.controller.resize(id, cols, 10)).toThrow(/^Expected the `cols` argument to be an integer from 1 to 65535, got /)
    // The documented code of a resize refusal (PtyProvider.resize), on the controller and on a terminal handle alike.
    const refusal = { code: 'invalid_option', option: 'cols', value: cols }
    expect(() => h.controller.resize(id, cols, 10)).toThrow(expect.objectContaining(refusal))
    const terminal = h.controller.terminal(id)
    expect(() => terminal?.resize(cols, 10)).toThrow(expect.objectContaining(refusal))
    expect(() => terminal?.resize(10, cols)).toThrow(expect.objectContaining({ ...refusal, option: 'rows' }))
  })

  it('passes a provider\'s refusal of the size (a limit of its own) to the caller; any other throw is provider_threw and false', async () => {
    const fake = createFakePtyProvider()
    const refusal = Object.assign(new Error('Expected the `cols` option to keep the screen within 8388608 cells, got 5000'), { code: 'invalid_option', option: 'cols', value: 5000 })
    let resizeThrows: unknown = refusal
    const provider: PtyProvider = Object.assign(Object.create(fake) as PtyProvider, {
      resize: (id: string, cols: number, rows: number) => {
        if (cols === 5000) throw resizeThrows
        return fake.resize(id, cols, rows)
      },
    })
    const controller = createPtyController({ provider })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(error.code))
    const { id } = await controller.spawn({})
    // Before: false, and an `error` event (provider_threw) the caller of resize never sees.
    expect(() => controller.resize(id, 5000, 5000)).toThrow(refusal)
    expect(errors).toEqual([])
    expect(controller.resize(id, 120, 40)).toBe(true)
    resizeThrows = new Error('the provider broke')
    expect(controller.resize(id, 5000, 10)).toBe(false)
    expect(errors).toEqual(['provider_threw'])
    await controller.dispose()
  })
})

describe('queries', () => {
  it('answers hasPty in three values', async () => {
    const h = createHarness()
    const live = await h.controller.spawn({})
    const gone = await h.controller.spawn({})
    h.provider.emitExit(gone.id, { exitCode: 0 })
    expect(h.controller.hasPty(live.id)).toBe(true)
    expect(h.controller.hasPty(gone.id)).toBe(false)
    // Unknown to the controller: the provider's authoritative answer.
    expect(h.controller.hasPty('never')).toBe(false)
    const doubtful = createHarness({ provider: { authoritativeListings: false } })
    expect(doubtful.controller.hasPty('never')).toBeNull()
  })

  it('passes a provider\'s doubt about a live PTY on as null, never rounded up to true', async () => {
    const h = createHarness()
    const live = await h.controller.spawn({})
    h.provider.setLiveness(live.id, null)
    expect(h.controller.hasPty(live.id)).toBeNull()
    h.provider.setLiveness(live.id, true)
    expect(h.controller.hasPty(live.id)).toBe(true)
    const throwing = createHarness()
    const other = await throwing.controller.spawn({})
    throwing.controller.on('error', () => {})
    throwing.provider.hasPty = () => {
      throw new Error('host gone')
    }
    expect(throwing.controller.hasPty(other.id)).toBeNull()
  })

  it('probes liveness: false only when proven, null on errors', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    await expect(h.controller.probePtyLiveness(id)).resolves.toBe(true)
    h.provider.probeLiveness = () => Promise.reject(new Error('timeout'))
    await expect(h.controller.probePtyLiveness(id)).resolves.toBeNull()
    h.provider.emitExit(id, { exitCode: 0 })
    await expect(h.controller.probePtyLiveness(id)).resolves.toBe(false)
  })

  it('settles an unverified stop through a probe: false confirms the death, true says live', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    await h.settle()
    await expect(h.controller.probePtyLiveness(id)).resolves.toBe(true)
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'live' })
    // Probed again, still alive: nothing known changed, so no second event (before: one per probe).
    await expect(h.controller.probePtyLiveness(id)).resolves.toBe(true)
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable', 'live'])
    h.provider.setLiveness(id, false)
    await expect(h.controller.probePtyLiveness(id)).resolves.toBe(false)
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'exited' })
    expect(h.controller.hasPty(id)).toBe(false)
  })

  it('delegates process queries to the owning provider, null once exited', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.controller.spawn({ cwd: '/tmp', file: '/bin/zsh' })
    h.provider.setProcessInfo(id, { hasChildProcesses: true })
    await expect(h.controller.getCwd(id)).resolves.toBe('/tmp')
    await expect(h.controller.getForegroundProcess(id)).resolves.toBe('zsh')
    await expect(h.controller.hasChildProcesses(id)).resolves.toBe(true)
    await expect(h.controller.inspectProcess(id, { scanChildProcesses: true, ...(incarnationId === undefined ? {} : { expectedIncarnationId: incarnationId }) })).resolves.toEqual({
      foregroundProcess: 'zsh',
      hasChildProcesses: true,
    })
    await expect(h.controller.inspectProcess(id, { expectedIncarnationId: toPtyIncarnationId('older') })).resolves.toEqual({
      foregroundProcess: null,
      hasChildProcesses: null,
      unavailable: true,
    })
    h.provider.emitData(id, 'screen')
    await expect(h.controller.serializeProviderBuffer(id)).resolves.toMatchObject({ data: 'screen', seq: 6 })
    await h.controller.clearBuffer(id)
    await expect(h.controller.serializeProviderBuffer(id)).resolves.toMatchObject({ data: '' })
    h.provider.emitExit(id, { exitCode: 0 })
    await expect(h.controller.getCwd(id)).resolves.toBeNull()
    await expect(h.controller.getForegroundProcess(id)).resolves.toBeNull()
    await expect(h.controller.hasChildProcesses(id)).resolves.toBeNull()
    await expect(h.controller.serializeProviderBuffer(id)).resolves.toBeNull()
    await expect(h.controller.inspectProcess(id)).resolves.toMatchObject({ unavailable: true })
  })

  it('answers null when the provider lacks a capability or throws', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    const provider: PtyProvider = {
      name: 'minimal',
      spawn: (options) => fake.spawn(options),
      write: (id, data) => fake.write(id, data),
      resize: (id, cols, rows) => fake.resize(id, cols, rows),
      shutdown: (id, options) => fake.shutdown(id, options),
      listProcesses: () => fake.listProcesses(),
      getCwd: () => Promise.reject(new Error('EPERM')),
      onData: (listener) => fake.onData(listener),
      onExit: (listener) => fake.onExit(listener),
    }
    const controller = createPtyController({ provider, clock: createManualClock() })
    const { id } = await controller.spawn({})
    await expect(controller.getCwd(id)).resolves.toBeNull()
    await expect(controller.getForegroundProcess(id)).resolves.toBeNull()
    await expect(controller.hasChildProcesses(id)).resolves.toBeNull()
    await expect(controller.probePtyLiveness(id)).resolves.toBeNull()
    await expect(controller.serializeProviderBuffer(id)).resolves.toBeNull()
    expect(controller.hasPty('unknown')).toBeNull()
  })

  it('reports inventory by scope, with stopping and unverified PTYs still counted as live', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const a = await h.controller.spawn({ scopeId: 'repo-a', preAllocatedHandle: 'term-1' })
    const b = await h.controller.spawn({ scopeId: 'repo-b' })
    const c = await h.controller.spawn({ scopeId: 'repo-a' })
    h.provider.emitExit(c.id, { exitCode: 0 })
    h.controller.kill(a.id)
    // Only hosts that answered a listing are queried (seed rule 11.4): none before the first one.
    expect([...h.controller.inventory().queriedHostIds]).toEqual([])
    await h.controller.listProcessesWithHostScope()
    const inventory = h.controller.inventory('repo-a')
    expect([...inventory.livePtyIds]).toEqual([a.id])
    expect([...inventory.allLivePtyIds].sort()).toEqual([a.id, b.id].sort())
    expect([...(inventory.exitingPtyIds ?? [])]).toEqual([a.id])
    expect(inventory.terminalIdentityByPtyId.get(a.id)).toEqual({ hostId: 'local', incarnationId: a.incarnationId, handle: 'term-1' })
    expect([...inventory.queriedHostIds]).toEqual(['local'])
  })

  it('attaches to a live PTY it does not track, and never creates one', async () => {
    const h = createHarness()
    const outside = await h.provider.spawn({})
    await expect(h.controller.attach(outside.id)).resolves.toBe(true)
    expect(h.events[0]).toEqual({
      type: 'spawn',
      event: { ptyId: outside.id, incarnationId: outside.incarnationId, hostId: 'local', pid: outside.pid, isReattach: true, cols: 80, rows: 24 },
    })
    h.provider.emitData(outside.id, 'hi')
    expect(h.data().map((event) => event.data)).toEqual(['hi'])
    await expect(h.controller.attach('missing')).resolves.toBe(false)
    expect(h.provider.livePtyIds()).toEqual([outside.id])
  })

  it('answers false to an attach whose process exited before the reply was handled, and never revives it', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    await h.settle()
    expect(h.controller.hasPty(id)).toBeNull()
    const attachReply = h.provider.spawn.bind(h.provider)
    h.provider.spawn = async (options) => {
      const reply = await attachReply(options)
      // The process dies right after the host answered the attach.
      h.provider.emitExit(id, { exitCode: 0, signal: 9 })
      return reply
    }
    await expect(h.controller.attach(id)).resolves.toBe(false)
    expect(h.controller.hasPty(id)).toBe(false)
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable', 'exited'])
    expect(h.controller.writeWithSettlement(id, 'x', 'driving')).toEqual(refusedWrite('pty_exited'))
  })
})

describe('multi-host routing', () => {
  function twoHosts() {
    const local = createFakePtyProvider({ scheduling: 'manual', idPrefix: 'l-' })
    const remote = createFakePtyProvider({ scheduling: 'manual', idPrefix: 'r-', hostId: 'ssh:box' })
    const controller = createPtyController({
      providers: new Map([
        ['local', local],
        ['ssh:box', remote],
      ]),
      clock: createManualClock(),
    })
    return { local, remote, controller }
  }

  it('spawns on the named host and routes every later call to its provider', async () => {
    const { local, remote, controller } = twoHosts()
    const exits: string[] = []
    controller.on('exit', (event) => exits.push(event.ptyId))
    const here = await controller.spawn({})
    const there = await controller.spawn({ hostId: 'ssh:box' })
    expect(here.hostId).toBe('local')
    expect(there.hostId).toBe('ssh:box')
    expect(controller.write(there.id, 'uname\r', 'driving')).toBe(true)
    expect(remote.getPty(there.id)?.written).toBe('uname\r')
    expect(local.calls.filter((call) => call.method === 'write')).toEqual([])
    controller.kill(there.id)
    expect(remote.calls.filter((call) => call.method === 'shutdown')).toHaveLength(1)
    expect(local.calls.filter((call) => call.method === 'shutdown')).toHaveLength(0)
    expect(exits).toEqual([there.id])
  })

  it('ignores an exit reported by another host for the same id', async () => {
    const { local, remote, controller } = twoHosts()
    local.scriptNextSpawn({ id: 'same' })
    remote.scriptNextSpawn({ id: 'same' })
    await remote.spawn({})
    await controller.spawn({})
    const exits: unknown[] = []
    controller.on('exit', (event) => exits.push(event))
    remote.emitExit('same', { exitCode: 1 })
    expect(exits).toEqual([])
    expect(controller.hasPty('same')).toBe(true)
  })

  it('lists per host with the host scope, leaving out hosts that fail', async () => {
    const { local, remote, controller } = twoHosts()
    await controller.spawn({})
    await controller.spawn({ hostId: 'ssh:box' })
    const scoped = await controller.listProcessesWithHostScope()
    expect(scoped.hostIds).toEqual(['local', 'ssh:box'])
    expect(scoped.processes.map((row) => row.hostId)).toEqual(['local', 'ssh:box'])
    remote.setListingFailure(new Error('ssh down'))
    const partial = await controller.listProcessesWithHostScope()
    expect(partial.hostIds).toEqual(['local'])
    expect(partial.processes.map((row) => row.id)).toEqual(local.livePtyIds())
    await expect(controller.listProcesses('local')).resolves.toHaveLength(1)
    // A failed single host is unknown, never "runs nothing".
    const failed = await controller.listProcesses('ssh:box').catch((error: unknown) => error)
    expect(isPtyControllerError(failed) && failed.code).toBe('listing_failed')
    await expect(controller.listProcesses('nowhere')).rejects.toThrow(
      'Expected the `hostId` argument to name a registered host, got "nowhere" (string)',
    )
  })

  it('a remote host whose listing failed makes its PTYs unverifiable once, and live again once it lists them', async () => {
    const { remote, controller } = twoHosts()
    const there = await controller.spawn({ hostId: 'ssh:box' })
    const verdicts: string[] = []
    controller.on('liveness', (event) => verdicts.push(event.verdict.kind === 'unverifiable' ? `unverifiable:${event.verdict.reason}` : event.verdict.kind))
    remote.setListingFailure(new Error('ssh down'))
    await controller.listProcessesWithHostScope()
    await controller.listProcessesWithHostScope()
    remote.setListingFailure(undefined)
    await controller.listProcessesWithHostScope()
    await controller.listProcessesWithHostScope()
    // Before: `unverifiable` at every failed listing, and never `live` again once the host answered.
    expect(verdicts).toEqual([`unverifiable:${PTY_LIVENESS_REASONS.hostListingFailed}`, 'live'])
    expect(controller.hasPty(there.id)).toBe(true)
  })

  it('takes the rows of a provider that answers at the deadline it was given (what it could read by then)', async () => {
    // A provider that reads details until its deadline and then answers with what it has (the SSH
    // provider's cwd and title reads) must not lose the race with the controller's own wait.
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    await controller.spawn({})
    const list = provider.listProcesses.bind(provider)
    provider.listProcesses = async (options) => {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, (options?.deadlineMs ?? Date.now()) - Date.now())))
      return list()
    }
    for (let i = 0; i < 5; i++) await expect(controller.listProcesses(undefined, { timeoutMs: 60 })).resolves.toHaveLength(1)
    await expect(controller.listProcessesWithHostScope({ deadlineMs: Date.now() + 60 })).resolves.toMatchObject({ hostIds: ['local'] })
    await controller.dispose()
  })

  it('rejects when the local host\'s listing hangs past the deadline (a remote one is left out: seed rule 11.3)', async () => {
    const h = createHarness()
    h.provider.listProcesses = () => new Promise(() => undefined)
    const result = h.run(h.controller.listProcessesWithHostScope({ timeoutMs: 300 }))
    await expect(result).rejects.toMatchObject({ code: 'listing_failed' })
    expect(h.clock.now()).toBe(300)
    expect(h.errors().map((error) => error.code)).toEqual(['listing_failed'])
  })

  it('one size limit for spawn and resize: 65 535 accepted by both, 65 536 refused by both, naming the value', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({ cols: MAX_PTY_DIMENSION, rows: 10 })
    expect(h.controller.resize(id, MAX_PTY_DIMENSION, 10)).toBe(true)
    expect(h.controller.getSize(id)).toEqual({ cols: MAX_PTY_DIMENSION, rows: 10 })
    const spawnRefusal = await h.controller.spawn({ cols: MAX_PTY_DIMENSION + 1 }).catch((error: unknown) => error)
    expect(spawnRefusal).toMatchObject({ code: 'invalid_spawn_options' })
    expect(String((spawnRefusal as Error).cause)).toContain('`cols` option to be an integer from 1 to 65535, got 65536 (number)')
    expect(() => h.controller.resize(id, MAX_PTY_DIMENSION + 1, 10)).toThrow(
      Object.assign(new TypeError('Expected the `cols` argument to be an integer from 1 to 65535, got 65536 (number)'), { code: 'invalid_option', option: 'cols', value: 65_536 }),
    )
    expect(h.controller.getSize(id)).toEqual({ cols: MAX_PTY_DIMENSION, rows: 10 })
  })
})
