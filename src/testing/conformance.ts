import { describe, expect, it } from 'vitest'
import type {
  ProviderSpawnOptions,
  PtyDataEvent,
  PtyExitEvent,
  PtyProvider,
  PtySpawnResult,
  Unsubscribe,
} from '../contracts/index.js'
import { isTerminalExitCause } from '../exit-cause/index.js'
import { seedRuleConformanceChecks } from './conformance-seed-checks.js'

/**
 * How long one conformance check waits for an event before it fails. Real PTYs start a shell and
 * exit within a few hundred milliseconds; a loaded CI box can be ten times slower.
 */
export const CONFORMANCE_DEFAULT_TIMEOUT_MS = 5_000

/**
 * How often a waiting check wakes up when no event arrives, to call `drive` and re-check: short
 * enough not to slow a fast provider, long enough not to spin.
 */
export const CONFORMANCE_POLL_INTERVAL_MS = 10

/**
 * A conformance test's own vitest timeout, in multiples of `timeoutMs`: the slowest check waits for
 * up to four exits in a row, plus set-up and clean-up.
 */
export const CONFORMANCE_TEST_TIMEOUT_FACTOR = 6

/** What a provider can and cannot do; a check that needs a missing capability is not registered. */
export type PtyProviderConformanceCapabilities = {
  /** The provider delivers signals (graceful vs immediate stops differ). Default `true`; `false` on Windows. */
  signals?: boolean
  /** `getSize` reads the size back from the host. Default: `true` when the provider has `getSize`. */
  resizeReadback?: boolean
  /**
   * A PTY missing from `listProcesses` is proven absent (so an exited PTY must be missing). Default:
   * the provider's own `authoritativeListings`.
   */
  authoritativeListings?: boolean
  /** `dispose()` reports an exit for each PTY it kills. Default `true`. */
  exitsOnDispose?: boolean
}

/**
 * How the conformance suite drives a provider generically: which spawn options start which kind
 * of process, what the provider cannot do, and how long to wait.
 */
export type PtyProviderConformanceOptions = {
  /** Options that start a process which prints `text` and then exits with code 0. */
  spawnEcho(text: string): ProviderSpawnOptions
  /** Options that start a process which keeps running until it is stopped (and reads its input). */
  spawnLongRunning(): ProviderSpawnOptions
  /** Options that start a process which exits on its own with `code` (printing nothing is fine). */
  spawnExit(code: number): ProviderSpawnOptions
  /** What the provider cannot do. */
  capabilities?: PtyProviderConformanceCapabilities
  /** How long to wait for an event. Default {@link CONFORMANCE_DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Called after each successful spawn (for example to flush a fake's scheduled output). */
  afterSpawn?(provider: PtyProvider, result: PtySpawnResult): void | Promise<void>
  /** Called repeatedly while a check waits for an event (for example `provider.settle()` of a manual fake). */
  drive?(provider: PtyProvider): void | Promise<void>
}

/** One event a conformance check recorded: a provider's data or exit event, tagged. */
export type PtyProviderConformanceEvent =
  | {
      /** A data event. */
      kind: 'data'
      /** The event as the provider emitted it. */
      event: PtyDataEvent
    }
  | {
      /** An exit event. */
      kind: 'exit'
      /** The event as the provider emitted it. */
      event: PtyExitEvent
    }

type RecordedEvent = PtyProviderConformanceEvent

// Records every event of one provider, and lets a check wait (with a timeout) until a condition holds.
class EventRecorder {
  readonly events: RecordedEvent[] = []
  private readonly unsubscribes: Unsubscribe[]
  private wake: (() => void) | undefined

  constructor(provider: PtyProvider) {
    this.unsubscribes = [
      provider.onData((event) => this.push({ kind: 'data', event })),
      provider.onExit((event) => this.push({ kind: 'exit', event })),
    ]
  }

  private push(recorded: RecordedEvent): void {
    this.events.push(recorded)
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  forPty(id: string): RecordedEvent[] {
    return this.events.filter((recorded) => recorded.event.id === id)
  }

  exitsOf(id: string): PtyExitEvent[] {
    return this.forPty(id).flatMap((recorded) => (recorded.kind === 'exit' ? [recorded.event] : []))
  }

  outputOf(id: string): string {
    return this.forPty(id)
      .flatMap((recorded) => (recorded.kind === 'data' ? [recorded.event.data] : []))
      .join('')
  }

  // Resolves on the next event, or after `ms` — whichever comes first.
  nextEventOrTimeout(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined
        resolve()
      }, ms)
      this.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  dispose(): void {
    for (const unsubscribe of this.unsubscribes) unsubscribe()
  }
}

/** What a conformance check works with: a fresh provider, its recorded events, and helpers that wait with a timeout. */
export type PtyProviderConformanceHarness = {
  /** The provider under test (fresh for this check). */
  readonly provider: PtyProvider
  /** Spawn through the provider, remember the id for cleanup, and run `afterSpawn`. */
  spawn(options: ProviderSpawnOptions): Promise<PtySpawnResult>
  /** Every data and exit event of a PTY, in arrival order. */
  eventsOf(id: string): readonly PtyProviderConformanceEvent[]
  /** Every exit event of a PTY. */
  exitsOf(id: string): PtyExitEvent[]
  /** The concatenated output of a PTY. */
  outputOf(id: string): string
  /** Wait (driving the provider, with the timeout) for the first exit of a PTY. */
  waitForExit(id: string): Promise<PtyExitEvent>
}

/** One check of the conformance suite, runnable with {@link runPtyProviderConformanceCheck}. */
export type PtyProviderConformanceCheck = {
  /** What the check proves, as a sentence. */
  readonly name: string
  /** Run the check; throws (an assertion error) when the provider breaks the rule. */
  run(harness: PtyProviderConformanceHarness): Promise<void>
}

/**
 * Run one check against a fresh provider: set up the harness, run, then stop whatever the check
 * started and dispose the provider — also when the check fails.
 */
export async function runPtyProviderConformanceCheck(
  check: PtyProviderConformanceCheck,
  makeProvider: () => PtyProvider | Promise<PtyProvider>,
  options: PtyProviderConformanceOptions,
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS
  const made = await makeProvider()
  let disposedByCheck = false
  // Why a proxy: the clean-up must not dispose a provider twice when the check already did, and
  // methods are bound to the real provider so class-based providers (private fields) still work.
  const provider = new Proxy(made, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target)
      if (typeof value !== 'function') return value
      const bound = (value as (...args: unknown[]) => unknown).bind(target)
      if (key !== 'dispose') return bound
      return (...args: unknown[]) => {
        disposedByCheck = true
        return bound(...args)
      }
    },
  })
  const events = new EventRecorder(provider)
  const spawnedIds: string[] = []

  const waitUntil = async (condition: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (condition()) return
      await options.drive?.(provider)
      if (condition()) return
      if (Date.now() >= deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
      await events.nextEventOrTimeout(Math.min(CONFORMANCE_POLL_INTERVAL_MS, Math.max(1, deadline - Date.now())))
    }
  }

  const harness: PtyProviderConformanceHarness = {
    provider,
    async spawn(spawnOptions) {
      const result = await provider.spawn(spawnOptions)
      spawnedIds.push(result.id)
      await options.afterSpawn?.(provider, result)
      return result
    },
    eventsOf: (id) => events.forPty(id),
    exitsOf: (id) => events.exitsOf(id),
    outputOf: (id) => events.outputOf(id),
    async waitForExit(id) {
      await waitUntil(() => events.exitsOf(id).length > 0, `the exit of PTY ${JSON.stringify(id)}`)
      const exit = events.exitsOf(id)[0]
      if (exit === undefined) throw new Error(`No exit recorded for PTY ${JSON.stringify(id)}`)
      return exit
    },
  }

  let failed = false
  try {
    await check.run(harness)
  } catch (error) {
    failed = true
    throw error
  } finally {
    for (const id of spawnedIds) {
      if (events.exitsOf(id).length > 0) continue
      try {
        await provider.shutdown(id, { immediate: true })
      } catch {
        // Cleanup only: the check itself already passed or failed.
      }
    }
    events.dispose()
    try {
      if (!disposedByCheck) await made.dispose?.()
    } catch (error) {
      // Why: a failing cleanup must not hide the check's own failure; it is reported otherwise.
      if (!failed) throw error
    }
  }
}

/**
 * The checks every {@link PtyProvider} must pass, given how to drive it:
 *
 * - spawn → data → exit ordering: all of a PTY's data before its exit, exactly one exit;
 * - the exit carries the spawned incarnation (and data events too, when they carry one);
 * - exit codes arrive as spawned, and a cause, when sent, is valid and agrees with the code;
 * - a stop (graceful and immediate) leads to an exit;
 * - writes after exit (and to unknown ids) are refused or unverifiable, never accepted;
 * - `hasPty` and `probeLiveness` never answer `false` for a live PTY;
 * - listings contain every live PTY (and, when authoritative, no exited one);
 * - a resize is reflected in the size read back, where the provider can read it;
 * - foreground evidence (`confirmForeground`, when present) is plain, well-formed, or `null`, and
 *   `null` for unknown and exited PTYs; `resetInputModes` (when present) neither fails nor stops;
 * - `dispose` leaves nothing running;
 * - events are plain serializable data, and an unsubscribed listener hears nothing;
 * - the seed's provider-side rules: listings read `deadlineMs` as an absolute time (a past one
 *   answers at once), writes settle with a well-formed `WriteSettlement`, an attach to another live
 *   incarnation is refused with `pty_live_other_incarnation`, every exit names its incarnation.
 *
 * Use {@link describePtyProviderConformance} to register them with vitest; the list is exported so
 * other runners (or a test of a deliberately broken provider) can run them one by one.
 */
export function ptyProviderConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  const capabilities = options.capabilities ?? {}

  // A cause, when sent, must be valid and must not contradict the code the process exited with.
  const expectCauseAgreesWithCode = (exit: PtyExitEvent, code: number, result: PtySpawnResult): void => {
    if (exit.cause === undefined) return
    expect(isTerminalExitCause(exit.cause)).toBe(true)
    if (result.hostReportsChildExitStatus === false) {
      expect(exit.cause).toEqual({ kind: 'unknown', reason: 'host_status_unavailable' })
    } else {
      expect(exit.cause).toEqual({ kind: 'exited', exitCode: code })
    }
  }

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
    {
      name: 'never accepts a write after exit, nor to an unknown id',
      async run(h) {
        const result = await h.spawn(options.spawnExit(0))
        await h.waitForExit(result.id)
        const afterExit = await h.provider.write(result.id, 'too late\r')
        expect(afterExit.kind).not.toBe('accepted')
        const unknown = await h.provider.write('ptykit-conformance-no-such-pty', 'hello\r')
        expect(unknown.kind).not.toBe('accepted')
      },
    },
    {
      name: 'never answers `false` for a live PTY, and does not refuse its writes',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        if (h.provider.hasPty !== undefined) expect(h.provider.hasPty(result.id)).not.toBe(false)
        if (h.provider.probeLiveness !== undefined) expect(await h.provider.probeLiveness(result.id)).not.toBe(false)
        const settlement = await h.provider.write(result.id, '\r')
        expect(['accepted', 'unverifiable']).toContain(settlement.kind)
      },
    },
    {
      name: 'lists every live PTY, and no exited one when listings are authoritative',
      async run(h) {
        const first = await h.spawn(options.spawnLongRunning())
        const second = await h.spawn(options.spawnLongRunning())
        const listed = await h.provider.listProcesses()
        for (const result of [first, second]) {
          const row = listed.find((candidate) => candidate.id === result.id)
          expect(row, `listing row of ${result.id}`).toBeDefined()
          expect(typeof row?.hostId).toBe('string')
          if (row?.incarnationId !== undefined && result.incarnationId !== undefined) {
            expect(row.incarnationId).toBe(result.incarnationId)
          }
        }
        await h.provider.shutdown(first.id, { immediate: true })
        await h.waitForExit(first.id)
        if (capabilities.authoritativeListings ?? h.provider.authoritativeListings === true) {
          const after = (await h.provider.listProcesses()).map((row) => row.id)
          expect(after).not.toContain(first.id)
          expect(after).toContain(second.id)
        }
      },
    },
    {
      name: 'reflects a resize where the size can be read back, and refuses to resize an unknown PTY',
      async run(h) {
        const result = await h.spawn({ ...options.spawnLongRunning(), cols: 80, rows: 24 })
        expect(h.provider.resize(result.id, 100, 30)).toBe(true)
        const readback = capabilities.resizeReadback ?? h.provider.getSize !== undefined
        if (readback && h.provider.getSize !== undefined) {
          expect(h.provider.getSize(result.id)).toEqual({ cols: 100, rows: 30 })
        }
        expect(h.provider.resize('ptykit-conformance-no-such-pty', 100, 30)).toBe(false)
      },
    },
    {
      name: 'confirms foreground evidence only for a live PTY, and never makes it up (when it offers confirmForeground)',
      async run(h) {
        const confirm = h.provider.confirmForeground
        if (confirm === undefined) return
        const supports = h.provider.supportsForegroundProcessEvidence?.()
        if (supports !== undefined) expect(typeof supports).toBe('boolean')
        const result = await h.spawn(options.spawnLongRunning())
        const live = await confirm.call(h.provider, result.id)
        if (live !== null) {
          expect(typeof live.foregroundProcess).toBe('string')
          expect(live.foregroundProcess.length).toBeGreaterThan(0)
          expect(typeof live.shellForeground).toBe('boolean')
          expect(JSON.parse(JSON.stringify(live))).toEqual(live)
        }
        if (supports === false) expect(live).toBeNull()
        expect(await confirm.call(h.provider, 'ptykit-conformance-no-such-pty')).toBeNull()
        await h.provider.shutdown(result.id, { immediate: true })
        await h.waitForExit(result.id)
        expect(await confirm.call(h.provider, result.id)).toBeNull()
      },
    },
    {
      name: 'resets input modes of a live PTY and ignores unknown ids (when it offers resetInputModes)',
      async run(h) {
        const reset = h.provider.resetInputModes
        if (reset === undefined) return
        const result = await h.spawn(options.spawnLongRunning())
        await reset.call(h.provider, result.id)
        await reset.call(h.provider, 'ptykit-conformance-no-such-pty')
        // Resetting modes is not output and not a stop: the PTY is still live.
        expect(h.exitsOf(result.id)).toEqual([])
        if (h.provider.hasPty !== undefined) expect(h.provider.hasPty(result.id)).not.toBe(false)
      },
    },
    {
      name: 'leaves nothing running after dispose',
      async run(h) {
        const first = await h.spawn(options.spawnLongRunning())
        const second = await h.spawn(options.spawnLongRunning())
        if (h.provider.dispose === undefined) {
          // A provider without dispose must at least let every PTY be stopped.
          for (const result of [first, second]) await h.provider.shutdown(result.id, { immediate: true })
        } else {
          await h.provider.dispose()
        }
        const exitsReported = capabilities.exitsOnDispose !== false || h.provider.dispose === undefined
        if (exitsReported) {
          for (const result of [first, second]) await h.waitForExit(result.id)
        }
        // A provider may refuse every call after dispose (use after dispose is a programmer error);
        // then its exits are the only evidence, and they must have been reported.
        let listed: string[] | undefined
        try {
          listed = (await h.provider.listProcesses()).map((row) => row.id)
        } catch {
          listed = undefined
        }
        expect(exitsReported || listed !== undefined, 'dispose must be verifiable: report exits or keep listing').toBe(true)
        if (listed !== undefined) {
          expect(listed).not.toContain(first.id)
          expect(listed).not.toContain(second.id)
        }
        if (listed !== undefined && h.provider.hasPty !== undefined) {
          expect(h.provider.hasPty(first.id)).not.toBe(true)
          expect(h.provider.hasPty(second.id)).not.toBe(true)
        }
      },
    },
    ...seedRuleConformanceChecks(options, options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS),
  ]
}

/**
 * Register a vitest suite that checks what every {@link PtyProvider} must honour — the checks of
 * {@link ptyProviderConformanceChecks}, one `it` each.
 *
 * Every check creates its own provider with `makeProvider`, waits on events with a timeout (never
 * on microtask counts, so real processes work), and stops what it started afterwards.
 *
 * @param name - The suite's name (usually the provider's).
 * @param makeProvider - A fresh provider per check.
 * @param options - How to start echo, long-running and exiting processes, and what the provider cannot do.
 *
 * @example
 * ```ts
 * describePtyProviderConformance('fake', () => createFakePtyProvider(), {
 *   spawnEcho: (text) => ({ metadata: fakeScriptMetadata({ output: [text], exit: { exitCode: 0 } }) }),
 *   spawnLongRunning: () => ({}),
 *   spawnExit: (code) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: code } }) }),
 * })
 * ```
 */
export function describePtyProviderConformance(
  name: string,
  makeProvider: () => PtyProvider | Promise<PtyProvider>,
  options: PtyProviderConformanceOptions,
): void {
  const timeoutMs = options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`Expected the \`timeoutMs\` option to be a positive number, got ${String(timeoutMs)} (${typeof timeoutMs})`)
  }
  const checks = ptyProviderConformanceChecks(options)
  describe(`PtyProvider conformance: ${name}`, () => {
    for (const check of checks) {
      // Why the explicit test timeout: each check may wait up to `timeoutMs` several times.
      it(check.name, () => runPtyProviderConformanceCheck(check, makeProvider, options), timeoutMs * CONFORMANCE_TEST_TIMEOUT_FACTOR)
    }
  })
}
