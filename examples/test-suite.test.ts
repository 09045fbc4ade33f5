// What a host application's own vitest suite looks like with ptykit: the fake provider from
// `ptykit/testing` under the real controller, a manual clock for the controller's timers, and
// property tests fed by ptykit's arbitraries. No process is started and no test sleeps.
//
// The code under test is the host's own: `summarizeExit`, which turns an exit cause into what the
// host shows and acts on (a status bar, a retry policy, a CI verdict). The one rule that matters:
// it never says "success" unless the process provably exited with code 0.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { STOP_UNCONFIRMED_AFTER_MS, createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { describeTerminalExitCause, exitCauseFromWire, type TerminalExitCause } from 'ptykit/exit-cause'
import {
  arbitraryFakeExit,
  arbitraryTerminalExitCause,
  arbitraryWireExit,
  createFakePtyProvider,
  createManualClock,
  type FakePtyProviderOptions,
} from 'ptykit/testing'

// ---------------------------------------------------------------------------------------------------
// The host's code under test (in a real app this lives in the app's src/, not in the test).

/** What the host shows for an ended terminal, and acts on. */
type ExitSummary = {
  /** `success` only for a proven `exit 0`; `closed` for the user's own close; `unknown` when nobody can tell. */
  status: 'success' | 'failed' | 'closed' | 'unknown'
  /** The sentence for the status bar. */
  message: string
}

function summarizeExit(cause: TerminalExitCause): ExitSummary {
  const message = describeTerminalExitCause(cause)
  switch (cause.kind) {
    case 'operator_close':
      return { status: 'closed', message }
    case 'exited':
      return { status: cause.exitCode === 0 ? 'success' : 'failed', message }
    case 'signaled':
      return { status: 'failed', message }
    case 'unknown':
      // A stop that was never confirmed, a wrapper's status, a bare code: never a success.
      return { status: 'unknown', message }
  }
}

// ---------------------------------------------------------------------------------------------------
// The set-up every test shares: the fake provider under the real controller, exits recorded.

function setup(options: { provider?: FakePtyProviderOptions; clock?: ReturnType<typeof createManualClock> } = {}) {
  const provider = createFakePtyProvider(options.provider)
  const controller = createPtyController(options.clock === undefined ? { provider } : { provider, clock: options.clock })
  const exits: PtyControllerExitEvent[] = []
  const output: string[] = []
  controller.on('exit', (event) => exits.push(event))
  controller.on('data', (event) => output.push(event.data))
  return { provider, controller, exits, output }
}

describe('my host: terminal exits', () => {
  it('reports a clean exit as success, after all of its output', async () => {
    const { provider, controller, exits, output } = setup()
    provider.scriptNextSpawn({ output: ['building…\r\n', 'done\r\n'], exit: { exitCode: 0 } })
    const { id } = await controller.spawn({ file: 'make' })
    await provider.settle() // deliver the scripted output and exit

    expect(output).toEqual(['building…\r\n', 'done\r\n'])
    expect(exits).toEqual([expect.objectContaining({ ptyId: id, code: 0, cause: { kind: 'exited', exitCode: 0 } })])
    expect(summarizeExit(exits[0]!.cause)).toEqual({ status: 'success', message: 'Agent process exited with code 0' })
    await controller.dispose()
  })

  it('does not call a process killed by a signal a success, although its code is 0', async () => {
    const { provider, controller, exits } = setup()
    // node-pty reports every signalled death as exitCode 0 plus the signal.
    provider.scriptNextSpawn({ exit: { exitCode: 0, signal: 9 } })
    await controller.spawn({})
    await provider.settle()

    expect(exits[0]?.cause).toEqual({ kind: 'signaled', signal: 9 })
    expect(summarizeExit(exits[0]!.cause).status).toBe('failed')
    await controller.dispose()
  })

  it('reports a tab the user closed as closed (operator_close), not as a failure', async () => {
    const { provider, controller, exits } = setup()
    const { id } = await controller.spawn({}) // a live, silent PTY
    expect(controller.kill(id)).toBe(true)
    await provider.settle()

    // The fake confirmed the stop with SIGHUP; the controller had marked the stop, so it settles
    // to an operator close.
    expect(exits).toEqual([expect.objectContaining({ ptyId: id, cause: { kind: 'operator_close' } })])
    expect(summarizeExit(exits[0]!.cause)).toEqual({ status: 'closed', message: 'Terminal closed by operator request' })
    expect(controller.hasPty(id)).toBe(false)
    await controller.dispose()
  })

  it('reports a stop that is never confirmed as unknown (stop_unverified), and keeps the PTY unverifiable', async () => {
    const clock = createManualClock()
    const { provider, controller, exits } = setup({ clock })
    provider.scriptNextSpawn({ shutdown: 'never_confirm' }) // the host loses the stop
    const { id } = await controller.spawn({})
    expect(controller.kill(id)).toBe(true)
    await provider.settle()
    expect(exits).toEqual([]) // nothing is known yet

    clock.advance(STOP_UNCONFIRMED_AFTER_MS) // the controller gives up waiting, without a real sleep
    await provider.settle()

    expect(exits).toEqual([
      expect.objectContaining({ ptyId: id, code: -1, cause: { kind: 'unknown', reason: 'stop_unverified' } }),
    ])
    expect(summarizeExit(exits[0]!.cause).status).toBe('unknown')
    // The process may still be running: the controller says "cannot tell", never "gone".
    expect(controller.hasPty(id)).toBeNull()
    expect(provider.livePtyIds()).toEqual([id])
  })

  it('refuses input to an ended terminal instead of swallowing it', async () => {
    const { provider, controller } = setup()
    provider.scriptNextSpawn({ exit: { exitCode: 1 } })
    const { id } = await controller.spawn({})
    await provider.settle()

    expect(controller.writeWithSettlement(id, 'ls\r', 'driving')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    await controller.dispose()
  })
})

describe('my host: summarizeExit, for every exit a provider can report', () => {
  it('says success exactly for exited(0)', () => {
    fc.assert(
      fc.property(arbitraryTerminalExitCause(), (cause) => {
        const provenCleanExit = cause.kind === 'exited' && cause.exitCode === 0
        expect(summarizeExit(cause).status === 'success').toBe(provenCleanExit)
      }),
    )
  })

  it('never says success for an exit that crossed a wire without a valid cause', () => {
    fc.assert(
      fc.property(arbitraryWireExit({ malformedCodes: true }), (wire) => {
        if (summarizeExit(exitCauseFromWire(wire)).status === 'success') {
          // Only a sender that itself vouched for `exited(0)` can make it a success.
          expect(wire.cause).toEqual({ kind: 'exited', exitCode: 0 })
        }
      }),
    )
  })

  it('through the controller: success only when the provider saw a plain exit 0 and could say so', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryFakeExit(), async (exit) => {
        const { provider, controller, exits } = setup()
        provider.scriptNextSpawn({ exit })
        await controller.spawn({})
        await provider.settle()

        expect(exits).toHaveLength(1)
        const signalled = typeof exit.signal === 'number' && exit.signal > 0
        const provenCleanExit =
          exit.exitCode === 0 && !signalled && exit.hostReportsChildExitStatus !== false && exit.withoutCause !== true
        expect(summarizeExit(exits[0]!.cause).status === 'success').toBe(provenCleanExit)
        await controller.dispose()
      }),
      { numRuns: 200 },
    )
  })
})
