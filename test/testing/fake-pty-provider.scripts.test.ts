import { describe, it, expect, vi } from 'vitest'
import fc from 'fast-check'
import { resolveProcessExitCause } from 'ptykit/exit-cause'
import { arbitraryFakeExit, createFakePtyProvider, fakeScriptMetadata } from 'ptykit/testing'
import { setup, kinds, exitsOf } from './fake-pty-provider-harness.js'

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

  it('should attest a stop when the exit scripts stopRequestedBeforeDeath, and on every stop of its own that reached a live PTY', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ exit: { exitCode: 0, signal: 1, stopRequestedBeforeDeath: true } })
    await provider.spawn({})
    await provider.settle()
    const stopped = await provider.spawn({})
    await provider.shutdown(stopped.id)
    const declined = await provider.spawn({})
    provider.emitExit(declined.id, { exitCode: 0, stopRequestedBeforeDeath: false })
    expect(exitsOf(log).map((exit) => exit.stopRequestedBeforeDeath)).toEqual([true, true, undefined])
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
