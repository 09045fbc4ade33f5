import { describe, expect, it } from 'vitest'
import { createFakePtyProvider, fakeScriptMetadata } from 'ptykit/testing'

// A test author's typo in a control must fail loudly, naming the argument — not become a malformed
// provider event the controller silently drops (output that never arrives) or mis-reads.
describe('fake provider controls refuse malformed arguments', () => {
  it('throws a TypeError naming the argument and value, and leaves the PTY as it was', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    const { id } = await provider.spawn({})
    const data: unknown[] = []
    const exits: unknown[] = []
    provider.onData((event) => data.push(event.data))
    provider.onExit((event) => exits.push(event))
    expect(() => provider.emitData(id, 42 as never)).toThrow('Expected the `data` argument of emitData to be a string, got 42 (number)')
    expect(() => provider.emitExit(id, undefined as never)).toThrow('Expected the `exit` argument of emitExit to be a FakeExit object, got undefined')
    expect(() => provider.emitExit(id, { exitCode: 'x' } as never)).toThrow('Expected the `exitCode` of emitExit to be an integer, got "x" (string)')
    expect(() => provider.emitExit(id, { exitCode: 0, signal: '9' } as never)).toThrow('Expected the `signal` of emitExit to be an integer, null or undefined, got "9" (string)')
    // Typos that once became a verdict the test never asked for (`exited(0)`):
    expect(() => provider.emitExit(id, { exitCode: 0, signal: Number.NaN })).toThrow('Expected the `signal` of emitExit to be an integer')
    expect(() => provider.emitExit(id, { exitCode: 0, withoutCause: 'true' } as never)).toThrow('Expected the `withoutCause` of emitExit to be a boolean or undefined, got "true" (string)')
    expect(() => provider.emitExit(id, { exitCode: 0, hostReportsChildExitStatus: 'false' } as never)).toThrow('`hostReportsChildExitStatus` of emitExit')
    expect(() => provider.emitExit(id, { exitCode: 0, stopRequestedBeforeDeath: 'true' } as never)).toThrow(
      'Expected the `stopRequestedBeforeDeath` of emitExit to be a boolean or undefined, got "true" (string)',
    )
    expect(() => provider.emitExit(id, { exitCode: 0, signal: 9, diedBeforeStopRequest: 1 } as never)).toThrow(
      'Expected the `diedBeforeStopRequest` of emitExit to be a boolean or undefined, got 1 (number)',
    )
    expect(() => provider.scriptNextSpawn({ exit: { exitCode: 0, signal: '9' } as never })).toThrow("Expected the `signal` of the script's `exit` to be an integer")
    expect(() => provider.scriptNextSpawn({ exit: { exitCode: 'x' } as never })).toThrow("Expected the `exitCode` of the script's `exit` to be an integer")
    expect(() => provider.scriptNextSpawn({ exitBeforeReply: null as never })).toThrow("Expected the script's `exitBeforeReply` to be a FakeExit object, got null")
    expect(() => provider.scriptNextSpawn({ output: [42, 'ok'] as never })).toThrow("Expected the script's `output` to be an array of strings")
    expect(() => provider.scriptNextSpawn({ output: 'abc' as never })).toThrow("Expected the script's `output` to be an array of strings, got \"abc\" (string)")
    // A script carried in the spawn's metadata is checked the same way: the spawn rejects, naming it.
    await expect(provider.spawn({ metadata: fakeScriptMetadata({ exit: { exitCode: 0, withoutCause: 'yes' } as never }) })).rejects.toThrow(
      "Expected the `withoutCause` of the script's `exit` to be a boolean or undefined",
    )
    expect(() => provider.setLiveness(id, 'yes' as never)).toThrow('setLiveness to be true, false, null or undefined, got "yes" (string)')
    expect(() => provider.setWriteSettlement(id, { kind: 'ok' } as never)).toThrow('setWriteSettlement to be a WriteSettlement or undefined')
    expect(() => provider.setShutdownBehaviour(id, 'ignore' as never)).toThrow(
      "setShutdownBehaviour to be one of 'confirm', 'never_confirm', 'fail', 'time_out', 'exit_unreported', got \"ignore\" (string)",
    )
    expect(() => provider.scriptNextSpawn({ shutdown: 'ignore' as never })).toThrow(
      "Expected the script's `shutdown` to be one of 'confirm', 'never_confirm', 'fail', 'time_out', 'exit_unreported', got \"ignore\" (string)",
    )
    await provider.settle()
    expect(data).toEqual([])
    expect(exits).toEqual([])
    expect(provider.livePtyIds()).toEqual([id])
    // Well-formed calls still work.
    provider.setLiveness(id, null)
    provider.setWriteSettlement(id, { kind: 'refused', reason: 'pty_exited' })
    provider.setShutdownBehaviour(id, 'never_confirm')
    provider.emitData(id, 'ok')
    provider.emitExit(id, { exitCode: -1, signal: null })
    await provider.settle()
    expect(data).toEqual(['ok'])
    expect(exits).toHaveLength(1)
  })

  it('checks every script the same way, wherever it comes from: scriptNextSpawn, metadata, the defaultScript option', async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    // Typos that once played a spawn the test never asked for: a hang read as true, a liveness
    // answered as a string, a settlement the controller cannot read.
    expect(() => provider.scriptNextSpawn({ hang: 'false' } as never)).toThrow("Expected the script's `hang` to be a boolean or undefined, got \"false\" (string)")
    expect(() => provider.scriptNextSpawn({ liveness: 'false' } as never)).toThrow("Expected the script's `liveness` to be a boolean, null or undefined, got \"false\" (string)")
    expect(() => provider.scriptNextSpawn({ writeSettlement: { kind: 'ok' } } as never)).toThrow("Expected the script's `writeSettlement` to be a WriteSettlement or undefined")
    expect(() => provider.scriptNextSpawn({ pid: '42' } as never)).toThrow("Expected the script's `pid` to be a positive integer or undefined, got \"42\" (string)")
    // As a spawn reply must be (the pipeline refuses others): refused when scripted, not at the spawn.
    expect(() => provider.scriptNextSpawn({ pid: 0 })).toThrow("Expected the script's `pid` to be a positive integer or undefined, got 0 (number)")
    expect(() => provider.scriptNextSpawn({ cols: 80.5 } as never)).toThrow("Expected the script's `cols` to be an integer from 1 to 65535 or undefined, got 80.5 (number)")
    expect(() => provider.scriptNextSpawn({ rows: 0 })).toThrow("Expected the script's `rows` to be an integer from 1 to 65535 or undefined, got 0 (number)")
    expect(() => provider.scriptNextSpawn({ id: 7 } as never)).toThrow("Expected the script's `id` to be a non-empty string or undefined, got 7 (number)")
    expect(() => provider.scriptNextSpawn({ id: '' })).toThrow("Expected the script's `id` to be a non-empty string or undefined, got \"\" (string)")
    expect(() => provider.scriptNextSpawn({ commitOnSpawn: 0 } as never)).toThrow("Expected the script's `commitOnSpawn` to be a boolean or undefined")
    expect(() => provider.scriptNextSpawn(null as never)).toThrow('Expected the `script` argument to be a FakeSpawnScript object, got null')
    // In metadata, `shutdown` was not checked at all: a typo stopped the PTY as 'confirm' would.
    await expect(provider.spawn({ metadata: fakeScriptMetadata({ shutdown: 'ignore' } as never) })).rejects.toThrow("Expected the script's `shutdown` to be one of")
    await expect(provider.spawn({ metadata: { fakeScript: 'hang' } })).rejects.toThrow('Expected the `metadata.fakeScript` option to be a FakeSpawnScript object, got "hang" (string)')
    await expect(provider.spawn({ attachOnly: true, sessionId: 'x', metadata: { fakeScript: [] } })).rejects.toThrow('`metadata.fakeScript` option')
    expect(() => createFakePtyProvider({ defaultScript: { exit: { exitCode: 0, signal: '15' } } as never })).toThrow("Expected the `signal` of the script's `exit` to be an integer")
    expect(() => createFakePtyProvider({ defaultScript: 'confirm' as never })).toThrow('Expected the `defaultScript` option to be a FakeSpawnScript object, got "confirm" (string)')
    expect(provider.livePtyIds()).toEqual([])
    expect(provider.pendingSpawnCount()).toBe(0)
    // Well-formed scripts still play.
    provider.scriptNextSpawn({ hang: false, liveness: null, pid: 42, cols: 100, commitOnSpawn: true, writeSettlement: { kind: 'accepted' } })
    expect((await provider.spawn({})).pid).toBe(42)
  })

  it("refuses malformed provider options, naming each, and setProcessInfo's malformed info", async () => {
    expect(() => createFakePtyProvider({ authoritativeListings: 'false' } as never)).toThrow('Expected the `authoritativeListings` option to be a boolean or undefined, got "false" (string)')
    expect(() => createFakePtyProvider({ hostReportsChildExitStatus: 0 } as never)).toThrow('Expected the `hostReportsChildExitStatus` option to be a boolean or undefined, got 0 (number)')
    expect(() => createFakePtyProvider({ foregroundProcessEvidence: 'no' } as never)).toThrow('`foregroundProcessEvidence` option')
    expect(() => createFakePtyProvider({ hostId: 1 } as never)).toThrow('Expected the `hostId` option to be a string, got 1 (number)')
    expect(() => createFakePtyProvider({ now: 5 } as never)).toThrow('Expected the `now` option to be a function or undefined, got 5 (number)')

    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    // Before: a TypeError from reading a property of null, naming nothing.
    expect(() => provider.setProcessInfo(id, null as never)).toThrow('Expected the `info` argument of setProcessInfo to be a FakeProcessInfo object, got null')
    expect(() => provider.setProcessInfo(id, { hasChildProcesses: 'yes' } as never)).toThrow('Expected the `hasChildProcesses` of the `info` argument of setProcessInfo to be a boolean, null or undefined')
    expect(() => provider.setProcessInfo(id, { foregroundProcess: 3 } as never)).toThrow('`foregroundProcess` of the `info` argument')
    expect(() => provider.setProcessInfo(id, { foregroundEvidence: { foregroundProcess: 'vim' } } as never)).toThrow('`foregroundEvidence` of the `info` argument')
    provider.setProcessInfo(id, { foregroundProcess: 'vim', hasChildProcesses: true, foregroundEvidence: { foregroundProcess: 'vim', shellForeground: false } })
    expect(await provider.getForegroundProcess(id)).toBe('vim')
    expect(await provider.hasChildProcesses(id)).toBe(true)
  })

  it('dispose drops every listener, the output-loss ones too', async () => {
    const provider = createFakePtyProvider()
    provider.onData(() => undefined)
    provider.onExit(() => undefined)
    provider.onOutputLoss?.(() => undefined)
    expect(provider.listenerCount()).toBe(3)
    await provider.dispose()
    expect(provider.listenerCount()).toBe(0)
  })

  it("'exit_unreported': the stop ends the process without an exit event; listings and probes say it is gone", async () => {
    const provider = createFakePtyProvider({ scheduling: 'manual' })
    provider.scriptNextSpawn({ shutdown: 'exit_unreported' })
    const { id } = await provider.spawn({})
    const exits: unknown[] = []
    provider.onExit((event) => exits.push(event))
    await provider.shutdown(id)
    await provider.settle()
    expect(exits).toEqual([])
    expect(provider.livePtyIds()).toEqual([])
    expect(provider.getPty(id)?.live).toBe(false)
    expect(await provider.listProcesses()).toEqual([])
    expect(provider.hasPty(id)).toBe(false)
    expect(await provider.probeLiveness(id)).toBe(false)
    // Nothing of it follows: output and exits of a process that is gone are refused.
    expect(() => provider.emitData(id, 'late')).toThrow('not live')
  })
})

// A control that could change nothing must say so, naming the control and why — it was taken in
// silence, and a test that set it on the wrong PTY tested nothing (or passed on a PTY still live).
describe('fake provider controls refuse what could change nothing', () => {
  it('setShutdownBehaviour, setProcessInfo, setWriteSettlement and setInputHeld of an exited PTY throw, naming the control and the PTY', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.emitExit(id, { exitCode: 0 })
    const controls: [string, () => unknown][] = [
      ['setShutdownBehaviour', () => provider.setShutdownBehaviour(id, 'fail')],
      ['setProcessInfo', () => provider.setProcessInfo(id, { foregroundProcess: 'vim' })],
      ['setWriteSettlement', () => provider.setWriteSettlement(id, { kind: 'refused', reason: 'provider_refused_write' })],
      ['setInputHeld', () => provider.setInputHeld(id, true)],
    ]
    for (const [control, call] of controls) {
      expect(call, control).toThrow(TypeError)
      expect(call, control).toThrow(`${control}: the fake PTY "${id}" already exited; nothing ${control} sets is used for it now`)
    }
    // A malformed argument is named first, exited or not.
    expect(() => provider.setShutdownBehaviour(id, 'explode' as never)).toThrow(/^Expected the `behaviour` argument of setShutdownBehaviour/)
    // setLiveness of an exited PTY is an override (a provider that cannot tell), taken.
    provider.setLiveness(id, null)
    expect(provider.hasPty(id)).toBeNull()
  })

  it('emitExit with an incarnationId the fake never minted under the id throws, naming it — it was a stale exit that ended nothing', async () => {
    const provider = createFakePtyProvider()
    const { id, incarnationId } = await provider.spawn({})
    const exits: unknown[] = []
    provider.onExit((event) => exits.push(event))
    expect(() => provider.emitExit(id, { exitCode: 0, incarnationId: `${incarnationId}x` as never })).toThrow(TypeError)
    expect(() => provider.emitExit(id, { exitCode: 0, incarnationId: 'typo' as never })).toThrow(
      `emitExit: the \`incarnationId\` of the \`exit\` argument, "typo" (string), is no incarnation the fake minted under the id "${id}" ("${incarnationId}"); leave it out to end the current one`,
    )
    expect(exits).toEqual([])
    expect(provider.getPty(id)?.live).toBe(true)
    // Its own incarnation, named: ends it.
    provider.emitExit(id, { exitCode: 0, incarnationId: incarnationId as never })
    expect(provider.getPty(id)?.live).toBe(false)
  })

  it('setListingFailure(null) throws (undefined clears); it made every listing reject with null', async () => {
    const provider = createFakePtyProvider()
    expect(() => provider.setListingFailure(null)).toThrow('Expected the `error` argument of setListingFailure to be the error listings reject with, or undefined to clear it, got null')
    await expect(provider.listProcesses()).resolves.toEqual([])
    provider.setListingFailure(new Error('unreachable'))
    provider.setListingFailure(undefined)
    await expect(provider.listProcesses()).resolves.toEqual([])
  })
})
