import { describeValue } from '../contracts/describe-value.js'
import { settleWithin } from '../contracts/settle-within.js'
import type { PtyExitEvent, PtyProvider, Unsubscribe } from '../contracts/index.js'
import {
  CONFORMANCE_DEFAULT_TIMEOUT_MS,
  assertConformanceOptions,
  type PtyProviderConformanceCheck,
  type PtyProviderConformanceEvent,
  type PtyProviderConformanceHarness,
  type PtyProviderConformanceOptions,
} from './conformance-types.js'

// Running one conformance check: a fresh provider, a recorder of its events, waits that drive the
// provider with a timeout, and a clean-up that stops what the check started.

/**
 * How often a waiting check wakes up when no event arrives, to call `drive` and re-check: short
 * enough not to slow a fast provider, long enough not to spin.
 */
export const CONFORMANCE_POLL_INTERVAL_MS = 10

type RecordedEvent = PtyProviderConformanceEvent

// Records every event of one provider, and lets a check wait (with a timeout) until a condition holds.
class EventRecorder {
  readonly events: RecordedEvent[] = []
  private readonly unsubscribes: Unsubscribe[]
  private wake: (() => void) | undefined

  constructor(provider: PtyProvider) {
    this.unsubscribes = []
    for (const [method, subscribe] of [
      ['onData', () => provider.onData((event) => this.push({ kind: 'data', event }))],
      ['onExit', () => provider.onExit((event) => this.push({ kind: 'exit', event }))],
    ] as const) {
      const unsubscribe: unknown = subscribe()
      if (typeof unsubscribe !== 'function') {
        this.dispose()
        throw new Error(`provider.${method}(listener) must return an unsubscribe function (one that removes that listener), got ${describeValue(unsubscribe)}`)
      }
      this.unsubscribes.push(unsubscribe as Unsubscribe)
    }
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

/**
 * Run one check against a fresh provider: set up the harness, run, then stop whatever the check
 * started and dispose the provider — also when the check fails.
 *
 * @throws TypeError (as a rejection) for `options` that `ptyProviderConformanceChecks` refuses.
 */
export async function runPtyProviderConformanceCheck(
  check: PtyProviderConformanceCheck,
  makeProvider: () => PtyProvider | Promise<PtyProvider>,
  options: PtyProviderConformanceOptions,
): Promise<void> {
  assertConformanceOptions(options)
  const timeoutMs = options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS
  const made = await makeProvider()
  let disposedByCheck = false
  // Why a proxy: the clean-up must not dispose a provider twice when the check already did, and
  // methods are bound to the real provider so class-based providers (private fields) still work.
  // Every promise a method returns is bounded by `timeoutMs`: a provider call that never settles
  // fails the check naming the call, instead of hanging it (and its clean-up) for good.
  const provider = new Proxy(made, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target)
      if (typeof value !== 'function') return value
      const bound = (value as (...args: unknown[]) => unknown).bind(target)
      return (...args: unknown[]) => {
        if (key === 'dispose') disposedByCheck = true
        const answer = bound(...args)
        return isThenable(answer) ? settleOrFail(answer, timeoutMs, `provider.${String(key)}(${describeArguments(args)})`) : answer
      }
    },
  })
  /** Dispose the provider the check made, unless the check did; bounded like every call. */
  const disposeProvider = async (): Promise<void> => {
    if (!disposedByCheck && made.dispose !== undefined) await settleOrFail(made.dispose(), timeoutMs, 'provider.dispose()')
  }
  let events: EventRecorder
  try {
    events = new EventRecorder(provider)
  } catch (error) {
    // The provider failed a subscription (no unsubscribe): the check fails, and what it made — a
    // connection, a child process — is still let go.
    await disposeProvider().catch(() => undefined)
    throw error
  }
  const spawnedIds: string[] = []

  const waitUntil = async (condition: () => boolean, what: string): Promise<void> => {
    // The timers' own clock: a provider's test that mocks `Date` must not make this wait run for ever.
    const deadline = performance.now() + timeoutMs
    for (;;) {
      if (condition()) return
      await options.drive?.(provider)
      if (condition()) return
      if (performance.now() >= deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
      await events.nextEventOrTimeout(Math.min(CONFORMANCE_POLL_INTERVAL_MS, Math.max(1, deadline - performance.now())))
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
      await disposeProvider()
    } catch (error) {
      // Why: a failing cleanup must not hide the check's own failure; it is reported otherwise.
      if (!failed) throw error
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

/** The arguments of a call, for a message: strings and options as JSON (long ones cut), the rest as text. */
function describeArguments(args: readonly unknown[]): string {
  const describe = (arg: unknown): string => {
    if (typeof arg !== 'string' && (typeof arg !== 'object' || arg === null)) return String(arg)
    let shown: string
    try {
      shown = JSON.stringify(arg) ?? String(arg)
    } catch {
      shown = '{…}'
    }
    return shown.length > 80 ? `${shown.slice(0, 80)}…` : shown
  }
  return args.map(describe).join(', ')
}

/**
 * `answer`, or a rejection naming `call` once `timeoutMs` passed: every provider method must
 * settle (a provider bounds its own I/O), or its callers — the controller's stops, listings and
 * probes — would wait for good.
 */
async function settleOrFail<T>(answer: PromiseLike<T>, timeoutMs: number, call: string): Promise<T> {
  const settled = await settleWithin<T | typeof HUNG>(Promise.resolve(answer), timeoutMs, HUNG)
  if (settled === HUNG) throw new ProviderCallHungError(`${call} did not settle within ${timeoutMs} ms: every provider method must settle (bound its I/O with a timeout)`)
  return settled
}

/**
 * Internal: the failure of a provider call that did not settle in time — so a check that takes a
 * refusal as an answer can still tell a hang, which is always a failure.
 */
export class ProviderCallHungError extends Error {
  override readonly name = 'ProviderCallHungError'
}

/** What {@link settleOrFail}'s wait settles to when the call did not answer in time. */
const HUNG = Symbol('hung')
