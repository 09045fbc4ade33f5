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
      "setShutdownBehaviour to be one of 'confirm', 'never_confirm', 'fail', 'exit_unreported', got \"ignore\" (string)",
    )
    expect(() => provider.scriptNextSpawn({ shutdown: 'ignore' as never })).toThrow(
      "Expected the script's `shutdown` to be one of 'confirm', 'never_confirm', 'fail', 'exit_unreported', got \"ignore\" (string)",
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
