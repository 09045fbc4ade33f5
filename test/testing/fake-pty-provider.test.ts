import { describe, it, expect, vi } from 'vitest'
import fc from 'fast-check'
import type { PtyDataEvent, PtyExitEvent, PtyIncarnationId, PtySpawnResult, WriteSettlement } from 'ptykit/contracts'
import { isPtyIncarnationId, toPtyIncarnationId } from 'ptykit/contracts'
import { resolveProcessExitCause } from 'ptykit/exit-cause'
import {
  FAKE_DEFAULT_COLS,
  FAKE_DEFAULT_PROCESS_NAME,
  FAKE_DEFAULT_ROWS,
  FAKE_GRACEFUL_STOP_SIGNAL,
  FAKE_IMMEDIATE_STOP_SIGNAL,
  FakePtyAbsentError,
  FakePtyLiveOtherIncarnationError,
  arbitraryFakeExit,
  arbitraryWriteSettlement,
  createFakePtyProvider,
  fakeScriptMetadata,
  isFakePtyAbsentError,
  type FakePtyProvider,
  type FakePtyProviderOptions,
} from 'ptykit/testing'

type Recorded = { kind: 'data'; event: PtyDataEvent } | { kind: 'exit'; event: PtyExitEvent }

// Arrange helper: a provider plus a log of every event it emitted, in order.
function setup(options?: FakePtyProviderOptions): { provider: FakePtyProvider; log: Recorded[] } {
  const provider = createFakePtyProvider(options)
  const log: Recorded[] = []
  provider.onData((event) => log.push({ kind: 'data', event }))
  provider.onExit((event) => log.push({ kind: 'exit', event }))
  return { provider, log }
}

const kinds = (log: Recorded[]): string[] =>
  log.map((entry) => (entry.kind === 'data' ? `data:${entry.event.data}` : `exit:${entry.event.code}`))

const exitsOf = (log: Recorded[]): PtyExitEvent[] =>
  log.flatMap((entry) => (entry.kind === 'exit' ? [entry.event] : []))

describe('createFakePtyProvider: spawning', () => {
  it('should spawn a live, silent PTY with minted id, incarnation, pid and default size', async () => {
    const { provider, log } = setup()
    const result = await provider.spawn({})
    await provider.settle()

    expect(result).toEqual({
      id: 'fake-1',
      pid: expect.any(Number),
      incarnationId: expect.any(String),
      isReattach: false,
      cols: FAKE_DEFAULT_COLS,
      rows: FAKE_DEFAULT_ROWS,
    })
    expect(isPtyIncarnationId(result.incarnationId)).toBe(true)
    expect(provider.livePtyIds()).toEqual(['fake-1'])
    expect(provider.hasPty('fake-1')).toBe(true)
    expect(log).toEqual([])
    expect(provider.name).toBe('fake')
    expect(provider.authoritativeListings).toBe(true)
  })

  it('should honour the name, idPrefix and hostId options', async () => {
    const provider = createFakePtyProvider({ name: 'box', idPrefix: 'box:', hostId: 'ssh:box' })
    const result = await provider.spawn({})
    expect(provider.name).toBe('box')
    expect(result.id).toBe('box:1')
    expect(result.incarnationId?.startsWith('box:')).toBe(true)
    expect((await provider.listProcesses())[0]?.hostId).toBe('ssh:box')
  })

  it('should mint distinct ids and incarnations for every spawn', async () => {
    const provider = createFakePtyProvider()
    const results = await Promise.all([provider.spawn({}), provider.spawn({}), provider.spawn({})])
    expect(new Set(results.map((result) => result.id)).size).toBe(3)
    expect(new Set(results.map((result) => result.incarnationId)).size).toBe(3)
    expect(new Set(results.map((result) => result.pid)).size).toBe(3)
  })

  it('should use the scripted pid, reported size and provider sequence', async () => {
    const provider = createFakePtyProvider()
    provider.scriptNextSpawn({ pid: 4242, cols: 120, rows: 40, providerSequence: { value: 17, generation: 'reset' } })
    const result = await provider.spawn({ cols: 80, rows: 24 })
    expect(result.pid).toBe(4242)
    expect(result.cols).toBe(120)
    expect(result.rows).toBe(40)
    expect(result.providerSequence).toEqual({ value: 17, generation: 'reset' })
    expect(provider.getSize(result.id)).toEqual({ cols: 120, rows: 40 })
  })

  it('should report hostReportsChildExitStatus in the result only when set (script over provider option)', async () => {
    const provider = createFakePtyProvider({ hostReportsChildExitStatus: true })
    provider.scriptNextSpawn({ hostReportsChildExitStatus: false })
    expect((await provider.spawn({})).hostReportsChildExitStatus).toBe(false)
    expect((await provider.spawn({})).hostReportsChildExitStatus).toBe(true)
    expect('hostReportsChildExitStatus' in (await createFakePtyProvider().spawn({}))).toBe(false)
  })

  it('should take scripts from the queue in order, then the default script, and prefer metadata.fakeScript without consuming the queue', async () => {
    const provider = createFakePtyProvider({ defaultScript: { pid: 3 } })
    provider.scriptNextSpawn({ pid: 1 })
    provider.scriptNextSpawn({ pid: 2 })
    const fromMetadata = await provider.spawn({ metadata: fakeScriptMetadata({ pid: 99 }) })
    const first = await provider.spawn({})
    const second = await provider.spawn({})
    const third = await provider.spawn({})
    expect([fromMetadata.pid, first.pid, second.pid, third.pid]).toEqual([99, 1, 2, 3])
  })

  it('should reject a malformed metadata.fakeScript and bad sizes with a TypeError naming the option', async () => {
    const provider = createFakePtyProvider()
    await expect(provider.spawn({ metadata: { fakeScript: 'oops' } })).rejects.toThrow(
      'Expected the `metadata.fakeScript` option to be a FakeSpawnScript object, got "oops" (string)',
    )
    await expect(provider.spawn({ cols: 0 })).rejects.toThrow(
      new TypeError('Expected the `cols` option to be an integer from 1 to 65535, got 0 (number)'),
    )
    await expect(provider.spawn({ rows: 2.5 })).rejects.toThrow(TypeError)
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should call onPtySpawnCommitted once per spawn, unless the script says commitOnSpawn: false', async () => {
    const provider = createFakePtyProvider()
    const committed = vi.fn()
    await provider.spawn({ onPtySpawnCommitted: committed })
    expect(committed).toHaveBeenCalledTimes(1)
    provider.scriptNextSpawn({ commitOnSpawn: false })
    await provider.spawn({ onPtySpawnCommitted: committed })
    expect(committed).toHaveBeenCalledTimes(1)
  })

  it('should call onPtySpawnCommitted before a hung spawn replies (the process exists)', async () => {
    const provider = createFakePtyProvider()
    const committed = vi.fn()
    provider.scriptNextSpawn({ hang: true })
    const spawning = provider.spawn({ onPtySpawnCommitted: committed })
    expect(committed).toHaveBeenCalledTimes(1)
    provider.releaseSpawn()
    await spawning
    expect(committed).toHaveBeenCalledTimes(1)
  })
})

describe('createFakePtyProvider: scripted output and exits', () => {
  it('should emit scripted output then the exit after the reply, never synchronously with the spawn', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ output: ['a', 'b'], exit: { exitCode: 3 } })
    const result = await provider.spawn({})
    // The caller's continuation runs before any scripted event.
    expect(log).toEqual([])
    await provider.settle()
    expect(kinds(log)).toEqual(['data:a', 'data:b', 'exit:3'])
    expect(log.every((entry) => entry.event.incarnationId === result.incarnationId)).toBe(true)
    expect(exitsOf(log)[0]?.cause).toEqual({ kind: 'exited', exitCode: 3 })
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should deliver on a later macrotask by default, after the caller’s whole chain of awaits', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ output: ['x'], exit: { exitCode: 0 } })
    await provider.spawn({})
    for (let turn = 0; turn < 100; turn += 1) await Promise.resolve()
    expect(log).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(kinds(log)).toEqual(['data:x', 'exit:0'])
  })

  it('should deliver right after the caller’s first continuation with scheduling: microtask', async () => {
    const { provider, log } = setup({ scheduling: 'microtask' })
    provider.scriptNextSpawn({ output: ['x'], exit: { exitCode: 0 } })
    await provider.spawn({})
    expect(log).toEqual([])
    await Promise.resolve()
    await Promise.resolve()
    expect(kinds(log)).toEqual(['data:x', 'exit:0'])
  })

  it('should deliver only on settle() with scheduling: manual', async () => {
    const { provider, log } = setup({ scheduling: 'manual' })
    provider.scriptNextSpawn({ output: ['x'], exit: { exitCode: 0 } })
    await provider.spawn({})
    await new Promise((resolve) => setImmediate(resolve))
    expect(log).toEqual([])
    await provider.settle()
    expect(kinds(log)).toEqual(['data:x', 'exit:0'])
  })

  it('should let fake timers control macrotask delivery', async () => {
    vi.useFakeTimers()
    try {
      const { provider, log } = setup()
      provider.scriptNextSpawn({ output: ['x'] })
      await provider.spawn({})
      await Promise.resolve()
      expect(log).toEqual([])
      vi.runAllTimers()
      expect(kinds(log)).toEqual(['data:x'])
    } finally {
      vi.useRealTimers()
    }
  })

  it('should reject an unknown scheduling mode', () => {
    expect(() => createFakePtyProvider({ scheduling: 'later' as never })).toThrow(
      "Expected the `scheduling` option to be 'macrotask', 'microtask' or 'manual', got \"later\" (string)",
    )
  })

  it('should drop scripted events of a PTY that was stopped before they were delivered', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ output: ['late'], exit: { exitCode: 5 } })
    const { id } = await provider.spawn({})
    await provider.shutdown(id)
    await provider.settle()
    expect(kinds(log)).toEqual(['exit:0'])
    expect(exitsOf(log)).toHaveLength(1)
  })

  it('should build causes with resolveProcessExitCause: a signal with code 0 is signaled, not a clean exit', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ exit: { exitCode: 0, signal: 15 } })
    await provider.spawn({})
    await provider.settle()
    expect(exitsOf(log)[0]).toMatchObject({ code: 0, cause: { kind: 'signaled', signal: 15 } })
  })

  it('should omit the cause for an old sender (withoutCause)', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ exit: { exitCode: 0, withoutCause: true } })
    await provider.spawn({})
    await provider.settle()
    const exit = exitsOf(log)[0]
    expect(exit?.code).toBe(0)
    expect(exit !== undefined && 'cause' in exit).toBe(false)
  })

  it('should resolve hostReportsChildExitStatus with exit over script over provider precedence', async () => {
    const { provider, log } = setup({ hostReportsChildExitStatus: false })
    const a = await provider.spawn({})
    provider.scriptNextSpawn({ hostReportsChildExitStatus: true })
    const b = await provider.spawn({})
    const c = await provider.spawn({})
    provider.emitExit(a.id, { exitCode: 0, signal: 9 })
    provider.emitExit(b.id, { exitCode: 2 })
    provider.emitExit(c.id, { exitCode: 2, hostReportsChildExitStatus: true })
    expect(exitsOf(log).map((exit) => exit.cause)).toEqual([
      { kind: 'unknown', reason: 'host_status_unavailable' },
      { kind: 'exited', exitCode: 2 },
      { kind: 'exited', exitCode: 2 },
    ])
  })

  it('should report every scripted exit with exactly the cause resolveProcessExitCause gives (property)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryFakeExit(), fc.array(fc.string({ minLength: 1 }), { maxLength: 4 }), async (exit, output) => {
        const { provider, log } = setup({ scheduling: 'manual' })
        const result = await provider.spawn({ metadata: fakeScriptMetadata({ output, exit }) })
        await provider.settle()
        expect(kinds(log)).toEqual([...output.map((chunk) => `data:${chunk}`), `exit:${exit.exitCode}`])
        const event = exitsOf(log)[0]
        expect(event?.incarnationId).toBe(result.incarnationId)
        if (exit.withoutCause === true) {
          expect(event?.cause).toBeUndefined()
        } else {
          const observation = { exitCode: exit.exitCode, signal: exit.signal ?? null }
          expect(event?.cause).toEqual(
            resolveProcessExitCause(
              exit.hostReportsChildExitStatus === undefined
                ? observation
                : { ...observation, hostReportsChildExitStatus: exit.hostReportsChildExitStatus },
            ),
          )
        }
      }),
      { numRuns: 60 },
    )
  })
})

describe('createFakePtyProvider: failing, hanging and early-exiting spawns', () => {
  it('should reject with the scripted failure and leave nothing running', async () => {
    const provider = createFakePtyProvider()
    const failure = new Error('ENOENT')
    const committed = vi.fn()
    provider.scriptNextSpawn({ fail: failure })
    await expect(provider.spawn({ onPtySpawnCommitted: committed })).rejects.toBe(failure)
    expect(provider.livePtyIds()).toEqual([])
    expect(await provider.listProcesses()).toEqual([])
    expect(committed).not.toHaveBeenCalled()
  })

  it('should hold a hung spawn until releaseSpawn(), oldest first, and then deliver its script', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ hang: true, id: 'first', output: ['one'] })
    provider.scriptNextSpawn({ hang: true, id: 'second' })
    let firstResult: PtySpawnResult | undefined
    const first = provider.spawn({}).then((result) => (firstResult = result))
    const second = provider.spawn({})
    await provider.settle()
    expect(firstResult).toBeUndefined()
    expect(provider.pendingSpawnCount()).toBe(2)
    expect(provider.getPty('first')?.spawnPending).toBe(true)
    expect(provider.livePtyIds()).toEqual(['first', 'second'])

    provider.releaseSpawn()
    await first
    expect(firstResult?.id).toBe('first')
    expect(provider.pendingSpawnCount()).toBe(1)
    await provider.settle()
    expect(kinds(log)).toEqual(['data:one'])

    provider.releaseSpawn('second')
    expect((await second).id).toBe('second')
    expect(provider.pendingSpawnCount()).toBe(0)
  })

  it('should release or fail a hung spawn by id', async () => {
    const provider = createFakePtyProvider()
    provider.scriptNextSpawn({ hang: true, id: 'a' })
    provider.scriptNextSpawn({ hang: true, id: 'b' })
    const a = provider.spawn({})
    const b = provider.spawn({})
    const boom = new Error('transport lost')
    provider.failSpawn('b', boom)
    await expect(b).rejects.toBe(boom)
    expect(provider.livePtyIds()).toEqual(['a'])
    expect(provider.hasPty('b')).toBe(false)
    provider.releaseSpawn('a')
    expect((await a).id).toBe('a')
  })

  it('should fail the oldest hung spawn with a default Error and leave its process removed', async () => {
    const provider = createFakePtyProvider()
    provider.scriptNextSpawn({ hang: true })
    const spawning = provider.spawn({})
    provider.failSpawn()
    await expect(spawning).rejects.toThrow('Fake spawn failed (scripted)')
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should release a hung spawn whose process exited meanwhile with exitedBeforeSpawnReply: true', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ hang: true, id: 'racer', output: ['never'] })
    const spawning = provider.spawn({})
    provider.emitData('racer', 'early')
    provider.emitExit('racer', { exitCode: 1 })
    provider.releaseSpawn('racer')
    expect(await spawning).toMatchObject({ id: 'racer', exitedBeforeSpawnReply: true })
    await provider.settle()
    expect(kinds(log)).toEqual(['data:early', 'exit:1'])
  })

  it('should throw a TypeError when releasing or failing a spawn that is not pending', () => {
    const provider = createFakePtyProvider()
    expect(() => provider.releaseSpawn()).toThrow('releaseSpawn: no hung spawn is pending')
    expect(() => provider.failSpawn('x')).toThrow('failSpawn: no hung spawn with the id "x" is pending')
  })

  it('should emit the exit (after any scripted output) before an exitBeforeReply spawn resolves', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ output: ['boot'], exitBeforeReply: { exitCode: 0, signal: 11 } })
    const spawning = provider.spawn({})
    expect(kinds(log)).toEqual(['data:boot', 'exit:0'])
    const result = await spawning
    expect(result.exitedBeforeSpawnReply).toBe(true)
    expect(exitsOf(log)[0]).toEqual({
      id: result.id,
      code: 0,
      incarnationId: result.incarnationId,
      cause: { kind: 'signaled', signal: 11 },
    })
    expect(provider.livePtyIds()).toEqual([])
    await provider.settle()
    expect(exitsOf(log)).toHaveLength(1)
  })
})

describe('createFakePtyProvider: id reuse and incarnations', () => {
  it('should mint a new incarnation when a script reuses an id', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ id: 'slot' })
    const first = await provider.spawn({})
    provider.emitExit('slot', { exitCode: 0 })
    provider.scriptNextSpawn({ id: 'slot' })
    const second = await provider.spawn({})
    expect(second.id).toBe('slot')
    expect(second.incarnationId).not.toBe(first.incarnationId)
    expect(provider.getPty('slot')?.incarnations).toEqual([first.incarnationId, second.incarnationId])
    expect(provider.getPty('slot')?.live).toBe(true)
    expect(exitsOf(log).map((exit) => exit.incarnationId)).toEqual([first.incarnationId])
  })

  it('should emit a stale exit for an older incarnation without ending the current one', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ id: 'slot' })
    const old = await provider.spawn({})
    provider.scriptNextSpawn({ id: 'slot' })
    const current = await provider.spawn({})
    expect(old.incarnationId).toBeDefined()
    provider.emitExit('slot', { exitCode: 0, signal: 1, incarnationId: old.incarnationId as PtyIncarnationId })
    expect(exitsOf(log)).toEqual([
      { id: 'slot', code: 0, incarnationId: old.incarnationId, cause: { kind: 'signaled', signal: 1 } },
    ])
    expect(provider.getPty('slot')).toMatchObject({ live: true, incarnationId: current.incarnationId })
    expect(provider.write('slot', 'still here').kind).toBe('accepted')
  })
})

describe('createFakePtyProvider: liveness', () => {
  it('should answer true while live and false after exit when listings are authoritative', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    expect(provider.hasPty(id)).toBe(true)
    expect(await provider.probeLiveness(id)).toBe(true)
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.hasPty(id)).toBe(false)
    expect(await provider.probeLiveness(id)).toBe(false)
    expect(provider.hasPty('never-spawned')).toBe(false)
  })

  it('should answer null after exit (and for unknown ids) when listings are not authoritative', async () => {
    const provider = createFakePtyProvider({ authoritativeListings: false })
    expect(provider.authoritativeListings).toBe(false)
    const { id } = await provider.spawn({})
    expect(provider.hasPty(id)).toBe(true)
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.hasPty(id)).toBeNull()
    expect(await provider.probeLiveness(id)).toBeNull()
    expect(provider.hasPty('never-spawned')).toBeNull()
  })

  it.each([true, false, null] as const)('should answer the scripted liveness %s', async (liveness) => {
    const provider = createFakePtyProvider()
    provider.scriptNextSpawn({ liveness })
    const { id } = await provider.spawn({})
    expect(provider.hasPty(id)).toBe(liveness)
    expect(await provider.probeLiveness(id)).toBe(liveness)
  })

  it('should let setLiveness override and then restore the default', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.setLiveness(id, null)
    expect(provider.hasPty(id)).toBeNull()
    provider.setLiveness(id, undefined)
    expect(provider.hasPty(id)).toBe(true)
    expect(() => provider.setLiveness('nope', true)).toThrow('setLiveness: no fake PTY has the id "nope"')
  })
})

describe('createFakePtyProvider: writes', () => {
  it('should accept writes to a live PTY and record them', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    expect(provider.write(id, 'ls\r')).toEqual({ kind: 'accepted' })
    expect(provider.write(id, 'pwd\r')).toEqual({ kind: 'accepted' })
    expect(provider.getPty(id)?.written).toBe('ls\rpwd\r')
  })

  it('should refuse writes after exit with pty_exited and to unknown ids with pty_not_found', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.write(id, 'x')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(provider.write('ghost', 'x')).toEqual({ kind: 'refused', reason: 'pty_not_found' })
    expect(provider.getPty(id)?.writes).toEqual([])
  })

  it('should answer every scripted write settlement, and only accepted writes count as written (property)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryWriteSettlement(), arbitraryWriteSettlement(), async (scripted, later) => {
        const provider = createFakePtyProvider()
        provider.scriptNextSpawn({ writeSettlement: scripted })
        const { id } = await provider.spawn({})
        expect(provider.write(id, 'a')).toEqual(scripted)
        provider.setWriteSettlement(id, later)
        expect(provider.write(id, 'b')).toEqual(later)
        provider.setWriteSettlement(id, undefined)
        expect(provider.write(id, 'c')).toEqual({ kind: 'accepted' })
        const accepted = [scripted, later].map((s: WriteSettlement, i) => (s.kind === 'accepted' ? 'ab'[i] : ''))
        expect(provider.getPty(id)?.written).toBe(`${accepted.join('')}c`)
        expect(provider.getPty(id)?.writes.map((write) => write.settlement)).toEqual([scripted, later, { kind: 'accepted' }])
      }),
      { numRuns: 40 },
    )
  })
})

describe('createFakePtyProvider: shutdown', () => {
  it('should confirm a graceful stop with SIGHUP and an immediate one with SIGKILL', async () => {
    const { provider, log } = setup()
    const a = await provider.spawn({})
    const b = await provider.spawn({})
    await provider.shutdown(a.id)
    await provider.shutdown(b.id, { immediate: true })
    expect(exitsOf(log)).toEqual([
      { id: a.id, code: 0, incarnationId: a.incarnationId, cause: { kind: 'signaled', signal: FAKE_GRACEFUL_STOP_SIGNAL } },
      { id: b.id, code: 0, incarnationId: b.incarnationId, cause: { kind: 'signaled', signal: FAKE_IMMEDIATE_STOP_SIGNAL } },
    ])
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should emit the exit before the shutdown promise resolves', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    const stopping = provider.shutdown(id)
    expect(exitsOf(log)).toHaveLength(1)
    await stopping
  })

  it('should resolve a never-confirmed stop while the PTY stays live and no exit ever comes', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await provider.spawn({})
    await expect(provider.shutdown(id)).resolves.toBeUndefined()
    await provider.settle()
    expect(log).toEqual([])
    expect(provider.hasPty(id)).toBe(true)
  })

  it('should reject a failing stop with an Error and keep the PTY live', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.setShutdownBehaviour(id, 'fail')
    await expect(provider.shutdown(id)).rejects.toThrow(`Fake shutdown of PTY "${id}" failed (scripted)`)
    expect(log).toEqual([])
    expect(provider.livePtyIds()).toEqual([id])
    provider.setShutdownBehaviour(id, 'confirm')
    await provider.shutdown(id)
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should leave a replacement alone when the stop names an older incarnation', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    await provider.shutdown(id, { expectedIncarnationId: toPtyIncarnationId('someone-else') })
    expect(log).toEqual([])
    expect(provider.hasPty(id)).toBe(true)
  })

  it('should resolve a stop of an unknown or already exited PTY without emitting anything', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.emitExit(id, { exitCode: 0 })
    await provider.shutdown(id)
    await provider.shutdown('ghost')
    expect(exitsOf(log)).toHaveLength(1)
  })
})

describe('createFakePtyProvider: pause and resume', () => {
  it('should hold output while paused and deliver it in order on resume', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.pauseProducer(id)
    provider.emitData(id, '1')
    provider.emitData(id, '2')
    expect(log).toEqual([])
    expect(provider.getPty(id)).toMatchObject({ paused: true, heldEventCount: 2 })
    provider.resumeProducer(id)
    expect(kinds(log)).toEqual(['data:1', 'data:2'])
    expect(provider.getPty(id)).toMatchObject({ paused: false, heldEventCount: 0 })
    expect(provider.calls.filter((call) => call.method.endsWith('Producer')).map((call) => call.method)).toEqual([
      'pauseProducer',
      'resumeProducer',
    ])
  })

  it('should hold scripted output too, and deliver an exit behind held output after it', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ output: ['a', 'b'], exit: { exitCode: 4 } })
    const { id } = await provider.spawn({})
    provider.pauseProducer(id)
    await provider.settle()
    expect(log).toEqual([])
    expect(provider.livePtyIds()).toEqual([])
    expect(provider.write(id, 'x').kind).toBe('refused')
    provider.resumeProducer(id)
    expect(kinds(log)).toEqual(['data:a', 'data:b', 'exit:4'])
  })

  it('should deliver an exit at once while paused when no output is held', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.pauseProducer(id)
    provider.emitExit(id, { exitCode: 0 })
    expect(kinds(log)).toEqual(['exit:0'])
  })

  it('should always deliver data before exit, whatever the pause/resume interleaving (property)', async () => {
    type Step = { kind: 'data'; data: string } | { kind: 'pause' } | { kind: 'resume' }
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.string({ minLength: 1, maxLength: 3 }).map((data): Step => ({ kind: 'data', data })),
      fc.constant<Step>({ kind: 'pause' }),
      fc.constant<Step>({ kind: 'resume' }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), fc.array(step, { maxLength: 4 }), async (before, after) => {
        const { provider, log } = setup()
        const { id } = await provider.spawn({})
        const run = (steps: Step[]): void => {
          for (const s of steps) {
            if (s.kind === 'data') provider.emitData(id, s.data)
            else if (s.kind === 'pause') provider.pauseProducer(id)
            else provider.resumeProducer(id)
          }
        }
        run(before)
        provider.emitExit(id, { exitCode: 7 })
        run(after.filter((s) => s.kind !== 'data'))
        provider.resumeProducer(id)
        const expected = before.flatMap((s) => (s.kind === 'data' ? [`data:${s.data}`] : []))
        expect(kinds(log)).toEqual([...expected, 'exit:7'])
      }),
      { numRuns: 80 },
    )
  })
})

describe('createFakePtyProvider: attach', () => {
  it('should attach to a live PTY by session id with the same incarnation and a continued sequence', async () => {
    const provider = createFakePtyProvider()
    const spawned = await provider.spawn({})
    provider.emitData(spawned.id, 'hello')
    const committed = vi.fn()
    const attached = await provider.spawn({ attachOnly: true, sessionId: spawned.id, onPtySpawnCommitted: committed })
    expect(attached).toMatchObject({
      id: spawned.id,
      incarnationId: spawned.incarnationId,
      isReattach: true,
      providerSequence: { value: 5, generation: 'continued' },
    })
    expect(committed).not.toHaveBeenCalled()
    expect(provider.getPty(spawned.id)?.incarnations).toHaveLength(1)
  })

  it('should attach when expectedIncarnationId matches', async () => {
    const provider = createFakePtyProvider()
    const spawned = await provider.spawn({})
    const attached = await provider.spawn({
      attachOnly: true,
      sessionId: spawned.id,
      expectedIncarnationId: spawned.incarnationId as PtyIncarnationId,
    })
    expect(attached.incarnationId).toBe(spawned.incarnationId)
  })

  it('should reject with a typed FakePtyAbsentError when the id is absent or exited, a FakePtyLiveOtherIncarnationError for another live incarnation, and never start a process', async () => {
    const provider = createFakePtyProvider()
    const spawned = await provider.spawn({})
    const exited = await provider.spawn({})
    provider.emitExit(exited.id, { exitCode: 0 })

    const absent = await provider.spawn({ attachOnly: true, sessionId: 'ghost' }).catch((error: unknown) => error)
    expect(absent).toBeInstanceOf(FakePtyAbsentError)
    expect(absent).toMatchObject({ code: 'pty_absent', ptyId: 'ghost', name: 'FakePtyAbsentError' })
    expect(isFakePtyAbsentError(absent)).toBe(true)

    await expect(provider.spawn({ attachOnly: true, sessionId: exited.id })).rejects.toMatchObject({ code: 'pty_absent' })
    await expect(provider.spawn({ attachOnly: true })).rejects.toMatchObject({ code: 'pty_absent', ptyId: undefined })

    const wrong = await provider
      .spawn({ attachOnly: true, sessionId: spawned.id, expectedIncarnationId: toPtyIncarnationId('older') })
      .catch((error: unknown) => error)
    expect(wrong).toBeInstanceOf(FakePtyLiveOtherIncarnationError)
    expect(wrong).toMatchObject({
      code: 'pty_live_other_incarnation',
      expectedIncarnationId: 'older',
      liveIncarnationId: spawned.incarnationId,
    })
    expect((wrong as Error).message).toContain('not the expected "older"')
    expect(provider.livePtyIds()).toEqual([spawned.id])
    expect(isFakePtyAbsentError(new Error('pty_absent'))).toBe(false)
  })

  it('should re-attach a non-new session spawn to its live PTY, and create one for a new session id', async () => {
    const provider = createFakePtyProvider()
    const created = await provider.spawn({ sessionId: 'session-a', isNewSession: true })
    expect(created).toMatchObject({ id: 'session-a', isReattach: false })
    const again = await provider.spawn({ sessionId: 'session-a' })
    expect(again).toMatchObject({ id: 'session-a', isReattach: true, incarnationId: created.incarnationId })
  })
})

describe('createFakePtyProvider: size, listings, inspection', () => {
  it('should reflect resizes in getSize, refuse unknown or exited PTYs, and reject bad sizes', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({ cols: 100, rows: 30 })
    expect(provider.getSize(id)).toEqual({ cols: 100, rows: 30 })
    expect(provider.resize(id, 132, 43)).toBe(true)
    expect(provider.getSize(id)).toEqual({ cols: 132, rows: 43 })
    expect(() => provider.resize(id, -1, 43)).toThrow('Expected the `cols` argument to be an integer from 1 to 65535, got -1 (number)')
    expect(provider.resize('ghost', 10, 10)).toBe(false)
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.resize(id, 10, 10)).toBe(false)
    expect(provider.getSize(id)).toBeNull()
  })

  it('should list live PTYs with identity, cwd, title and scope fields', async () => {
    const provider = createFakePtyProvider()
    const a = await provider.spawn({ file: '/bin/zsh', cwd: '/work', scopeId: 's', slotKey: 'pane', claimKey: 'agent' })
    const b = await provider.spawn({})
    const c = await provider.spawn({})
    provider.emitExit(c.id, { exitCode: 0 })
    expect(await provider.listProcesses()).toEqual([
      { id: a.id, hostId: 'local', incarnationId: a.incarnationId, pid: a.pid, cwd: '/work', title: 'zsh', scopeId: 's', slotKey: 'pane', claimKey: 'agent' },
      { id: b.id, hostId: 'local', incarnationId: b.incarnationId, pid: b.pid, cwd: null, title: FAKE_DEFAULT_PROCESS_NAME },
    ])
  })

  it('should reject listings while a listing failure is set', async () => {
    const provider = createFakePtyProvider()
    const failure = new Error('host unreachable')
    provider.setListingFailure(failure)
    await expect(provider.listProcesses()).rejects.toBe(failure)
    provider.setListingFailure(undefined)
    await expect(provider.listProcesses()).resolves.toEqual([])
  })

  it('should answer cwd, foreground process and children while live, and null after exit', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({ file: 'C:\\Windows\\pwsh.exe', cwd: '/repo' })
    expect(await provider.getCwd(id)).toBe('/repo')
    expect(await provider.getForegroundProcess(id)).toBe('pwsh.exe')
    expect(await provider.hasChildProcesses(id)).toBe(false)
    provider.setProcessInfo(id, { foregroundProcess: 'vim', hasChildProcesses: true })
    expect(await provider.getForegroundProcess(id)).toBe('vim')
    expect(await provider.hasChildProcesses(id)).toBe(true)
    provider.emitExit(id, { exitCode: 0 })
    expect(await provider.getCwd(id)).toBeNull()
    expect(await provider.getForegroundProcess(id)).toBeNull()
    expect(await provider.hasChildProcesses(id)).toBeNull()
  })

  it('should keep a buffer snapshot aligned to the produced chars, clear it, and count acknowledgements', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.emitData(id, 'abc')
    provider.emitData(id, 'de')
    expect(await provider.getBufferSnapshot(id)).toEqual({ data: 'abcde', cols: 80, rows: 24, seq: 5, source: 'fake' })
    await provider.clearBuffer(id)
    expect((await provider.getBufferSnapshot(id))?.data).toBe('')
    provider.acknowledgeData(id, 3)
    provider.acknowledgeData(id, 2)
    expect(provider.getPty(id)).toMatchObject({ acknowledgedChars: 5, producedChars: 5 })
    expect(await provider.getBufferSnapshot('ghost')).toBeNull()
  })

  it('should return undefined from getPty for an id never spawned', () => {
    expect(createFakePtyProvider().getPty('ghost')).toBeUndefined()
  })
})

describe('createFakePtyProvider: controls', () => {
  it('should throw when emitting data or a second exit for a PTY that is not live', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    expect(() => provider.emitData('ghost', 'x')).toThrow('emitData: no fake PTY has the id "ghost"')
    provider.emitExit(id, { exitCode: 0 })
    expect(() => provider.emitData(id, 'x')).toThrow(/not live/)
    expect(() => provider.emitExit(id, { exitCode: 0 })).toThrow(/already exited/)
  })

  it('should emit synchronously from control methods', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.emitData(id, 'now')
    expect(kinds(log)).toEqual(['data:now'])
  })

  it('should record every PtyProvider call in order with the injected clock, and forget them on clearCalls', async () => {
    let clock = 100
    const provider = createFakePtyProvider({ now: () => (clock += 10) })
    const { id } = await provider.spawn({ cols: 90 })
    provider.write(id, 'x')
    provider.resize(id, 91, 25)
    provider.hasPty(id)
    await provider.probeLiveness(id)
    await provider.listProcesses({ deadlineMs: 5 })
    await provider.shutdown(id, { immediate: true })
    expect(provider.calls.map((call) => [call.method, call.at])).toEqual([
      ['spawn', 110],
      ['write', 120],
      ['resize', 130],
      ['hasPty', 140],
      ['probeLiveness', 150],
      ['listProcesses', 160],
      ['shutdown', 170],
    ])
    expect(provider.calls[1]?.args).toEqual([id, 'x'])
    expect(provider.calls[6]?.args).toEqual([id, { immediate: true }])
    provider.clearCalls()
    expect(provider.calls).toEqual([])
  })

  it('should stamp calls with a counter by default, never the wall clock', async () => {
    const provider = createFakePtyProvider()
    await provider.spawn({})
    provider.hasPty('x')
    expect(provider.calls.map((call) => call.at)).toEqual([1, 2])
  })
})

describe('createFakePtyProvider: listeners and dispose', () => {
  it('should count listeners and release them on unsubscribe (twice is harmless)', () => {
    const provider = createFakePtyProvider()
    const offData = provider.onData(() => undefined)
    const offExit = provider.onExit(() => undefined)
    const listener = (): void => undefined
    const offA = provider.onData(listener)
    const offB = provider.onData(listener)
    expect(provider.listenerCount()).toBe(4)
    offA()
    offA()
    expect(provider.listenerCount()).toBe(3)
    offB()
    offData()
    offExit()
    expect(provider.listenerCount()).toBe(0)
  })

  it('should let a listener unsubscribe while an event is delivered without skipping the others', async () => {
    const provider = createFakePtyProvider()
    const heard: string[] = []
    const off = provider.onData(() => {
      heard.push('first')
      off()
    })
    provider.onData(() => heard.push('second'))
    const { id } = await provider.spawn({})
    provider.emitData(id, 'x')
    provider.emitData(id, 'y')
    expect(heard).toEqual(['first', 'second', 'second'])
  })

  it('should kill every PTY with an exit, deliver held output first, reject hung spawns and release every listener on dispose', async () => {
    const { provider, log } = setup()
    const a = await provider.spawn({})
    const b = await provider.spawn({})
    provider.pauseProducer(b.id)
    provider.emitData(b.id, 'held')
    provider.scriptNextSpawn({ hang: true })
    const hung = provider.spawn({})
    expect(provider.listenerCount()).toBe(2)

    await provider.dispose()

    await expect(hung).rejects.toThrow(/disposed/)
    expect(provider.livePtyIds()).toEqual([])
    expect(await provider.listProcesses()).toEqual([])
    expect(provider.pendingSpawnCount()).toBe(0)
    expect(provider.listenerCount()).toBe(0)
    expect(kinds(log)).toEqual(['exit:0', 'data:held', 'exit:0', 'exit:0'])
    expect(exitsOf(log).map((exit) => exit.id)).toEqual([a.id, b.id, expect.any(String)])
    expect(exitsOf(log).every((exit) => exit.cause?.kind === 'signaled')).toBe(true)
    await expect(provider.spawn({})).rejects.toThrow('The fake PTY provider "fake" was disposed')
    await expect(provider.dispose()).resolves.toBeUndefined()
  })

  it('should throw a TypeError for a listener that is not a function, and for a non-object script', () => {
    const provider = createFakePtyProvider()
    expect(() => provider.onData(undefined as never)).toThrow('Expected the listener to be a function, got undefined (undefined)')
    expect(() => provider.scriptNextSpawn(null as never)).toThrow(TypeError)
  })
})
