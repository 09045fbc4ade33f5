import { describe, it, expect } from 'vitest'
import { FAKE_DEFAULT_PROCESS_NAME, FakePtyProviderDisposedError, createFakePtyProvider, isFakePtyProviderDisposedError } from 'ptykit/testing'
import { setup, kinds, exitsOf } from './fake-pty-provider-harness.js'

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
    const { id, incarnationId } = await provider.spawn({})
    provider.emitData(id, 'abc')
    provider.emitData(id, 'de')
    // It names the incarnation whose screen it is (a controller refuses another's).
    expect(await provider.getBufferSnapshot(id)).toEqual({ data: 'abcde', cols: 80, rows: 24, seq: 5, source: 'fake', incarnationId })
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
    await provider.listProcesses({ timeoutMs: 5 })
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
    // A disposed provider no longer knows what runs: its listing is refused, never `[]` (the rule of every bundled provider).
    await expect(provider.listProcesses()).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`listProcesses`') })
    expect(provider.pendingSpawnCount()).toBe(0)
    expect(provider.listenerCount()).toBe(0)
    expect(kinds(log)).toEqual(['exit:0', 'data:held', 'exit:0', 'exit:0'])
    expect(exitsOf(log).map((exit) => exit.id)).toEqual([a.id, b.id, expect.any(String)])
    expect(exitsOf(log).every((exit) => exit.cause?.kind === 'signaled')).toBe(true)
    await expect(provider.spawn({})).rejects.toThrow('The fake PTY provider "fake" was disposed')
    await expect(provider.dispose()).resolves.toBeUndefined()
  })

  // Found by an audit: the fake rejected both with a plain `Error` (no `code`), where node-pty,
  // the pty host and SSH reject with `code: 'provider_disposed'` — a host tested against the fake
  // could not match on the code its real provider sends.
  it('should refuse a spawn after dispose, and a hung spawn dispose overtook, with a typed provider_disposed error, as the real providers do', async () => {
    const provider = createFakePtyProvider({ name: 'fake-under-test' })
    provider.scriptNextSpawn({ hang: true, id: 'hung' })
    const overtaken = provider.spawn({}).catch((error: unknown) => error)
    await provider.dispose()
    const late = await provider.spawn({ file: '/bin/sh' }).catch((error: unknown) => error)
    const attach = await provider.spawn({ attachOnly: true, sessionId: 'hung' }).catch((error: unknown) => error)

    expect(late).toBeInstanceOf(FakePtyProviderDisposedError)
    expect(isFakePtyProviderDisposedError(late)).toBe(true)
    expect(late).toMatchObject({
      code: 'provider_disposed',
      providerName: 'fake-under-test',
      method: 'spawn',
      ptyId: undefined,
      message: 'The fake PTY provider "fake-under-test" was disposed: cannot call `spawn`',
    })
    expect(attach).toMatchObject({ code: 'provider_disposed', method: 'spawn' })
    expect(isFakePtyProviderDisposedError(await overtaken)).toBe(true)
    expect(await overtaken).toMatchObject({
      code: 'provider_disposed',
      providerName: 'fake-under-test',
      method: 'spawn',
      ptyId: 'hung',
      message: 'The fake PTY provider "fake-under-test" was disposed while the spawn of "hung" was pending',
    })
    expect(isFakePtyProviderDisposedError(new Error('The fake PTY provider "fake-under-test" was disposed'))).toBe(false)
  })

  it('should throw a TypeError for a listener that is not a function, and for a non-object script', () => {
    const provider = createFakePtyProvider()
    expect(() => provider.onData(undefined as never)).toThrow('Expected the `listener` argument to be a function, got undefined (undefined)')
    expect(() => provider.scriptNextSpawn(null as never)).toThrow(TypeError)
  })
})
