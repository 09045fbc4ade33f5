import { expect } from './conformance-expect.js'
import type { PtyExitEvent, PtySpawnResult } from '../contracts/index.js'
import { exitCauseFromWire, isTerminalExitCause, type TerminalExitCause } from '../exit-cause/index.js'
import { CONFORMANCE_POLL_INTERVAL_MS } from './conformance-harness.js'
import type { PtyProviderConformanceCheck, PtyProviderConformanceHarness, PtyProviderConformanceOptions } from './conformance-types.js'

// The conformance checks of a PTY's events and its end: output before the single exit, exit codes
// and causes, plain data, unsubscribing, and the exits that stops lead to.

/** A cause, when sent, must be a `TerminalExitCause`: the message says what was sent and how to build one. */
export function expectValidCause(exit: PtyExitEvent): void {
  if (exit.cause === undefined) return
  expect(
    isTerminalExitCause(exit.cause),
    `the exit's cause ${JSON.stringify(exit.cause)} is not a TerminalExitCause: build it with resolveProcessExitCause, or leave it out`,
  ).toBe(true)
}

/** A cause, when sent, must be valid and must not contradict the code the process exited with. */
export function expectCauseAgreesWithCode(exit: PtyExitEvent, code: number, result: PtySpawnResult): void {
  if (exit.cause === undefined) return
  expectValidCause(exit)
  if (result.hostReportsChildExitStatus === false) {
    expect(exit.cause).toEqual({ kind: 'unknown', reason: 'host_status_unavailable' })
  } else {
    expect(exit.cause).toEqual({ kind: 'exited', exitCode: code })
  }
}

/**
 * What a controller reads from a signalled death's exit (`exitCauseFromWire`: the cause, else the
 * bare code) must be that signal or an `unknown` — never `exited(n)`: a code of `128 + n` sent
 * without a cause reads as `exited(128 + n)`, and a cause `exited` states what no one observed.
 * A wrapper host (`hostReportsChildExitStatus: false`) says `host_status_unavailable`.
 */
export function expectSignaledOrUnknown(exit: PtyExitEvent, signal: number, result: PtySpawnResult): void {
  expectValidCause(exit)
  const read: TerminalExitCause = exitCauseFromWire({ code: exit.code, cause: exit.cause })
  const what = `the exit of a process killed by signal ${signal} (code ${exit.code}, cause ${JSON.stringify(exit.cause)}) reads as ${JSON.stringify(read)}`
  if (result.hostReportsChildExitStatus === false) {
    if (exit.cause !== undefined) expect(exit.cause, what).toEqual({ kind: 'unknown', reason: 'host_status_unavailable' })
    return
  }
  if (read.kind === 'unknown') return
  expect(read, `${what}: it must be signaled(${signal}), or unknown where the host cannot carry that signal`).toEqual({ kind: 'signaled', signal })
}

/** How long a check listens on after a PTY's exit for anything that must not follow it. */
const CONFORMANCE_LINGER_AFTER_EXIT_MS = 100

/** Keep driving the provider for {@link CONFORMANCE_LINGER_AFTER_EXIT_MS}, so late events are recorded. */
async function lingerAfterExit(h: PtyProviderConformanceHarness, options: PtyProviderConformanceOptions): Promise<void> {
  // The timers' own clock: a provider's test that mocks `Date` must not make this loop run for ever.
  const until = performance.now() + CONFORMANCE_LINGER_AFTER_EXIT_MS
  while (performance.now() < until) {
    await options.drive?.(h.provider)
    await new Promise((resolve) => setTimeout(resolve, CONFORMANCE_POLL_INTERVAL_MS))
  }
}

/** The checks of events, exit codes and causes, and stops (see `ptyProviderConformanceChecks`). */
export function eventAndExitConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  const capabilities = options.capabilities ?? {}
  return [
    {
      name: 'delivers all of a PTY’s output before its single exit, and the exit carries the spawned incarnation',
      async run(h) {
        const text = 'ptykit-conformance-echo'
        const result = await h.spawn(options.spawnEcho(text))
        const exit = await h.waitForExit(result.id)
        // A second exit, or output, a moment later (a timer, a late callback) is caught too.
        await lingerAfterExit(h, options)
        const ordered = h.eventsOf(result.id)
        const exitIndex = ordered.findIndex((recorded) => recorded.kind === 'exit')
        expect(ordered.slice(exitIndex + 1), 'nothing of a PTY may follow its exit: no second exit, no output').toEqual([])
        expect(h.outputOf(result.id)).toContain(text)
        expect(h.exitsOf(result.id)).toHaveLength(1)
        expect(exit.code).toBe(0)
        expectCauseAgreesWithCode(exit, 0, result)
        if (result.incarnationId !== undefined) {
          expect(exit.incarnationId, 'the exit carries the incarnation the spawn returned').toBe(result.incarnationId)
          for (const recorded of ordered) {
            if (recorded.kind !== 'data') continue
            // Why every data event: the controller drops output that names no incarnation of a PTY
            // whose spawn named one (it cannot tell it from an older process's late output).
            expect(recorded.event.incarnationId, 'every data event carries the incarnation the spawn returned').toBe(result.incarnationId)
          }
        }
      },
    },
    {
      // 130 is what a shell exits with after a SIGINT it handled: a code, which a provider that
      // guesses `code > 128 ⇒ signal` would report as signaled(2).
      name: 'reports the exit code a process exited with (also one above 128), and a cause that agrees with it',
      async run(h) {
        for (const code of [0, 3, 42, 130]) {
          const result = await h.spawn(options.spawnExit(code))
          const exit = await h.waitForExit(result.id)
          expect(exit.code).toBe(code)
          expectCauseAgreesWithCode(exit, code, result)
          if (result.incarnationId !== undefined) expect(exit.incarnationId).toBe(result.incarnationId)
        }
      },
    },
    {
      name: 'emits events as plain serializable data',
      async run(h) {
        const result = await h.spawn(options.spawnEcho('ptykit-conformance-plain'))
        await h.waitForExit(result.id)
        for (const recorded of h.eventsOf(result.id)) {
          expect(JSON.parse(JSON.stringify(recorded.event))).toEqual(recorded.event)
        }
      },
    },
    {
      name: 'stops delivering to a listener once it unsubscribed (and unsubscribing twice is harmless)',
      async run(h) {
        const heard: unknown[] = []
        const unsubscribeData = h.provider.onData((event) => heard.push(event))
        const unsubscribeExit = h.provider.onExit((event) => heard.push(event))
        unsubscribeData()
        unsubscribeExit()
        unsubscribeData()
        unsubscribeExit()
        const result = await h.spawn(options.spawnEcho('ptykit-conformance-unsubscribed'))
        try {
          await h.waitForExit(result.id)
        } catch (error) {
          throw new Error(
            `${(error as Error).message}. The suite's own listener heard no exit after another listener unsubscribed twice: a second unsubscribe must not remove a different listener (splice(indexOf(listener), 1) removes the last one when indexOf answers -1)`,
          )
        }
        expect(heard).toEqual([])
      },
    },
    {
      name: 'ends a PTY after a graceful stop, with the stopped incarnation',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        await h.provider.shutdown(result.id)
        const exit = await h.waitForExit(result.id)
        if (result.incarnationId !== undefined) expect(exit.incarnationId).toBe(result.incarnationId)
        expectValidCause(exit)
      },
    },
    {
      name: 'ends a PTY after an immediate stop, never reporting it as a clean exit where signals exist',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        await h.provider.shutdown(result.id, { immediate: true })
        const exit = await h.waitForExit(result.id)
        if (exit.cause !== undefined) {
          expectValidCause(exit)
          // A kill is a signal where signals exist: never a clean `exited(0)`.
          if (capabilities.signals !== false && result.hostReportsChildExitStatus !== false) {
            expect(exit.cause).not.toEqual({ kind: 'exited', exitCode: 0 })
          }
        }
      },
    },
    ...signalConformanceChecks(options),
  ]
}

/** The checks of signalled deaths, registered only for a provider whose drivers can cause one. */
function signalConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  if (options.capabilities?.signals === false) return []
  const checks: PtyProviderConformanceCheck[] = []
  const { spawnSignaled, killFromOutside } = options
  if (spawnSignaled !== undefined) {
    checks.push({
      name: 'reports a process that killed itself with a signal as that signal (or unknown), never as an exit code',
      async run(h) {
        for (const signal of [2, 9, 15]) {
          const result = await h.spawn(spawnSignaled(signal))
          const exit = await h.waitForExit(result.id)
          expectSignaledOrUnknown(exit, signal, result)
          expect(exit.stopRequestedBeforeDeath, 'no stop was requested: the exit must not attest one').not.toBe(true)
          if (result.incarnationId !== undefined) expect(exit.incarnationId).toBe(result.incarnationId)
        }
      },
    })
  }
  if (killFromOutside !== undefined) {
    checks.push({
      // A SIGKILL cannot be caught, nor is it what a stop's hang-up sets off: a death by one
      // that the stop had not sent is not the stop's. Without `diedBeforeStopRequest` a controller
      // that asked for the stop would publish it as `operator_close` — a tab close, where the
      // OOM killer or a `kill -9` ended the process.
      name: 'keeps the cause of a process SIGKILLed from outside right before a graceful stop, and says it died before the stop request',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        await killFromOutside(result, h.provider)
        // At once: the kill is on its way or done; the stop's own SIGKILL is its last step, far off.
        const stopping = h.provider.shutdown(result.id)
        const exit = await h.waitForExit(result.id)
        await stopping.catch(() => undefined)
        expectSignaledOrUnknown(exit, 9, result)
        expect(
          exit.diedBeforeStopRequest,
          `the exit of a process SIGKILLed from outside, whose graceful stop had not sent SIGKILL, must say diedBeforeStopRequest (got ${JSON.stringify(exit)}): else a controller settles it as operator_close`,
        ).toBe(true)
        expect(exit.stopRequestedBeforeDeath, 'a death the stop did not cause attests no stop before it').not.toBe(true)
      },
    })
  }
  return checks
}
