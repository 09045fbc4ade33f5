// Delivery scheduling: when the fake delivers the events a script plays after the spawn reply
// (its `output` and `exit`), and how `settle()` waits for them.

/**
 * Microtask turns `settle()` yields before it looks for scheduled deliveries: enough for a
 * caller's chain of `await`s on a resolved spawn (a pipeline of a dozen stages) to run first.
 */
export const FAKE_SETTLE_MICROTASK_TURNS = 32

/** Rounds after which `settle()` gives up: a listener that schedules deliveries forever is a bug, not a wait. */
export const FAKE_SETTLE_MAX_ROUNDS = 1000

/**
 * When scripted post-reply events (`output`, `exit`) are delivered:
 *
 * - `macrotask` (default): on the next macrotask after the spawn resolved, so every microtask —
 *   a caller's whole chain of `await`s after the spawn — runs first, as with a real PTY whose
 *   output arrives on a later I/O turn;
 * - `microtask`: right after the spawn caller's first continuation; harsher, exposes code that
 *   assumes nothing arrives between `await spawn()` and its next step;
 * - `manual`: only when the test calls `settle()`.
 *
 * In every mode `await provider.settle()` delivers everything already scheduled.
 */
export type FakeDeliveryScheduling = 'macrotask' | 'microtask' | 'manual'

/**
 * The queue of scripted deliveries of one fake provider. Each delivery is a closure that checks,
 * when it runs, whether its PTY is still the live one (a script never speaks for a dead process).
 */
export type FakeDeliveryQueue = {
  /** Queue `delivery`; it runs once a drain is requested (or on `settle()`), after those queued before it. */
  schedule(delivery: () => void): void
  /**
   * Request a drain on the scheduling's turn (nothing in `manual` mode); call it once the spawn
   * promise resolved, so the caller's first continuation always runs before any scripted event.
   */
  requestDrain(): void
  /** Let pending microtasks run, then deliver everything queued, until nothing more is queued. */
  settle(): Promise<void>
  /** Forget every queued delivery (on dispose). */
  clear(): void
}

/** Create the {@link FakeDeliveryQueue} of a provider with the given scheduling. */
export function createFakeDeliveryQueue(scheduling: FakeDeliveryScheduling): FakeDeliveryQueue {
  const scheduled: Array<() => void> = []
  let drainRequested = false

  const drain = (): void => {
    drainRequested = false
    while (scheduled.length > 0) {
      const next = scheduled.shift()
      next?.()
    }
  }

  return {
    schedule(delivery) {
      scheduled.push(delivery)
    },

    requestDrain() {
      if (scheduling === 'manual' || drainRequested) return
      drainRequested = true
      if (scheduling === 'microtask') {
        queueMicrotask(drain)
        return
      }
      // Looked up at call time so that fake timers (vi.useFakeTimers) can intercept it.
      const setImmediateFn = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate
      if (typeof setImmediateFn === 'function') setImmediateFn(drain)
      else setTimeout(drain, 0)
    },

    async settle() {
      for (let round = 0; round < FAKE_SETTLE_MAX_ROUNDS; round += 1) {
        for (let turn = 0; turn < FAKE_SETTLE_MICROTASK_TURNS; turn += 1) await Promise.resolve()
        if (scheduled.length === 0) return
        drain()
      }
      throw new Error(`settle() gave up after ${FAKE_SETTLE_MAX_ROUNDS} rounds: deliveries kept being scheduled`)
    },

    clear() {
      scheduled.length = 0
    },
  }
}
