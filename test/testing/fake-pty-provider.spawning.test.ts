import { describe, it, expect, vi } from 'vitest'
import { isPtyIncarnationId } from 'ptykit/contracts'
import { FAKE_DEFAULT_COLS, FAKE_DEFAULT_ROWS, createFakePtyProvider, fakeScriptMetadata, isFakePtyIdInUseError } from 'ptykit/testing'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { setup } from './fake-pty-provider-harness.js'

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
      // A new stream, as the real providers report a fresh start.
      providerSequence: { value: 0, generation: 'reset' },
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
    // A refused option, as every real provider's: `code`, `option` and `value` (a bare TypeError until 7 Dec).
    const cols = await provider.spawn({ cols: 0 }).catch((error: unknown) => error)
    expect(cols).toBeInstanceOf(TypeError)
    expect(cols).toMatchObject({ message: 'Expected the `cols` option to be an integer from 1 to 65535, got 0 (number)', code: 'invalid_spawn_option', option: 'cols', value: 0 })
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

describe('createFakePtyProvider: a session id a PTY still holds', () => {
  it('refuses a new session under a live id with pty_id_in_use, as every real provider does, and the first process runs on', async () => {
    const provider = createFakePtyProvider()
    const first = await provider.spawn({ sessionId: 'tab-1', isNewSession: true })
    const refusal = await provider.spawn({ sessionId: 'tab-1', isNewSession: true }).catch((error: unknown) => error)
    expect(isFakePtyIdInUseError(refusal)).toBe(true)
    expect(refusal).toMatchObject({ code: 'pty_id_in_use', ptyId: 'tab-1', liveIncarnationId: first.incarnationId })
    // Before: the second spawn replaced the first, which never got an exit, not even at dispose.
    expect(provider.getPty('tab-1')?.incarnationId).toBe(first.incarnationId)
    expect(provider.hasPty('tab-1')).toBe(true)
  })

  it('refuses an id whose exit is still held behind paused output, and delivers that output and exit once resumed', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    let chars = 0
    const exits: PtyControllerExitEvent[] = []
    controller.on('data', ({ data }) => (chars += data.length))
    controller.on('exit', (event) => exits.push(event))
    await controller.spawn({ sessionId: 'tab-1', isNewSession: true })
    controller.acknowledgeData('tab-1', 0) // flow control engaged: unacknowledged output pauses the producer
    for (let i = 0; i < 150; i++) provider.emitData('tab-1', 'x'.repeat(1_000))
    provider.emitExit('tab-1', { exitCode: 3 })
    expect(provider.getPty('tab-1')?.heldEventCount).toBeGreaterThan(0)
    const refusal = await controller.spawn({ sessionId: 'tab-1', isNewSession: true }).catch((error: { cause?: unknown }) => error.cause)
    expect(refusal).toMatchObject({ code: 'pty_id_in_use', message: expect.stringMatching(/still held behind paused output/) })
    controller.acknowledgeData('tab-1', 150_000)
    await provider.settle()
    // Before: the respawn overwrote the record, and 49 000 chars and the exit were lost.
    expect(chars).toBe(150_000)
    expect(exits.map((event) => event.cause)).toEqual([{ kind: 'exited', exitCode: 3 }])
    await controller.dispose()
  })

  it("a script's own id still replaces a live process (the fake's way to test stale incarnations), its held events delivered first", async () => {
    const provider = createFakePtyProvider()
    const first = await provider.spawn({})
    const second = await provider.spawn({ metadata: fakeScriptMetadata({ id: first.id }) })
    expect(second.id).toBe(first.id)
    expect(second.incarnationId).not.toBe(first.incarnationId)
  })

  it("a script's id reuse of an id whose exit is held delivers that output and exit first, never drops them", async () => {
    const provider = createFakePtyProvider()
    const seen: string[] = []
    provider.onData(({ data }) => seen.push(data))
    provider.onExit(({ code }) => seen.push(`exit ${code}`))
    const first = await provider.spawn({})
    provider.pauseProducer(first.id)
    provider.emitData(first.id, 'held')
    provider.emitExit(first.id, { exitCode: 3 })
    await provider.spawn({ metadata: fakeScriptMetadata({ id: first.id }) })
    // Before: the record was overwritten with its held events, and neither ever came.
    expect(seen).toEqual(['held', 'exit 3'])
  })
})
