import { expect } from 'vitest'
import type { PtyExitEvent, PtySpawnResult } from '../contracts/index.js'
import { isTerminalExitCause } from '../exit-cause/index.js'
import type { PtyProviderConformanceCheck, PtyProviderConformanceOptions } from './conformance-types.js'

// The conformance checks of a PTY's events and its end: output before the single exit, exit codes
// and causes, plain data, unsubscribing, and the exits that stops lead to.

/** A cause, when sent, must be valid and must not contradict the code the process exited with. */
export function expectCauseAgreesWithCode(exit: PtyExitEvent, code: number, result: PtySpawnResult): void {
  if (exit.cause === undefined) return
  expect(isTerminalExitCause(exit.cause)).toBe(true)
  if (result.hostReportsChildExitStatus === false) {
    expect(exit.cause).toEqual({ kind: 'unknown', reason: 'host_status_unavailable' })
  } else {
    expect(exit.cause).toEqual({ kind: 'exited', exitCode: code })
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
        const ordered = h.eventsOf(result.id)
        const exitIndex = ordered.findIndex((recorded) => recorded.kind === 'exit')
        expect(ordered.slice(exitIndex + 1)).toEqual([])
        expect(h.outputOf(result.id)).toContain(text)
        expect(h.exitsOf(result.id)).toHaveLength(1)
        expect(exit.code).toBe(0)
        expectCauseAgreesWithCode(exit, 0, result)
        if (result.incarnationId !== undefined) {
          expect(exit.incarnationId).toBe(result.incarnationId)
          for (const recorded of ordered) {
            if (recorded.kind === 'data' && recorded.event.incarnationId !== undefined) {
              expect(recorded.event.incarnationId).toBe(result.incarnationId)
            }
          }
        }
      },
    },
    {
      name: 'reports the exit code a process exited with, and a cause that agrees with it',
      async run(h) {
        for (const code of [0, 3, 42]) {
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
        await h.waitForExit(result.id)
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
        if (exit.cause !== undefined) expect(isTerminalExitCause(exit.cause)).toBe(true)
      },
    },
    {
      name: 'ends a PTY after an immediate stop, never reporting it as a clean exit where signals exist',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        await h.provider.shutdown(result.id, { immediate: true })
        const exit = await h.waitForExit(result.id)
        if (exit.cause !== undefined) {
          expect(isTerminalExitCause(exit.cause)).toBe(true)
          // A kill is a signal where signals exist: never a clean `exited(0)`.
          if (capabilities.signals !== false && result.hostReportsChildExitStatus !== false) {
            expect(exit.cause).not.toEqual({ kind: 'exited', exitCode: 0 })
          }
        }
      },
    },
  ]
}
