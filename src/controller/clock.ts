import { clampTimerDelay } from '../contracts/index.js'

/**
 * An opaque timer handle returned by {@link PtyClock.setTimeout}; only ever handed back to
 * {@link PtyClock.clearTimeout}.
 */
export type PtyTimerHandle = unknown

/**
 * The controller's only source of time. Every timer the controller arms (stop escalation, the
 * unconfirmed-stop window, flow-control re-asserts and caps, listing deadlines) goes through it, so
 * a test can drive them deterministically with a manual clock instead of sleeping.
 */
export type PtyClock = {
  /** Milliseconds since an arbitrary origin; only differences are used. */
  now(): number
  /** Call `callback` once after `ms` milliseconds; returns a handle for {@link PtyClock.clearTimeout}. */
  setTimeout(callback: () => void, ms: number): PtyTimerHandle
  /** Cancel a timer; a handle that already fired or was cleared is ignored. */
  clearTimeout(handle: PtyTimerHandle): void
}

/**
 * The default clock: `performance.now()` and the global timer functions.
 *
 * Why not `Date.now()`: the wall clock jumps (a laptop resumed from sleep, NTP stepping it, a
 * test's mocked `Date`: `vi.setSystemTime`, `vi.useFakeTimers({ toFake: ['Date'] })`) while timers
 * do not follow; a caller's epoch `deadlineMs` is read against `Date.now()` once, when the call
 * comes, and the wait it leaves is counted on this clock, the timers' own. On `Date.now()`, a frozen
 * or stepped-back `Date` kept a `stopAndWait` waiting for ever (or for the hour stepped back).
 * `vi.useFakeTimers()` fakes `performance` with the timers, so fake timers still drive it.
 *
 * Why lambdas that look the globals up on every call: a test that installs fake timers
 * (`vi.useFakeTimers()`) after the controller was created still drives the controller's timers.
 */
export function createSystemClock(): PtyClock {
  return {
    now: () => performance.now(),
    setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
    clearTimeout: (handle) => {
      globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0])
    },
  }
}

/**
 * `clock` with every delay clamped to what a timer holds (`MAX_TIMER_DELAY_MS`, ~24.8 days): a
 * longer one — a caller's "as good as forever" — fires after 1 ms on Node's timers. The controller
 * arms every timer through the clock it wraps with this, the system's or a host's.
 */
export function withClampedDelays(clock: PtyClock): PtyClock {
  return {
    now: () => clock.now(),
    setTimeout: (callback, ms) => clock.setTimeout(callback, clampTimerDelay(ms)),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  }
}
