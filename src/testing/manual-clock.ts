import { describeValue } from '../contracts/describe-value.js'
import { assertOptionsBag, optionNamesOf } from '../contracts/known-options.js'
import type { PtyClock, PtyTimerHandle } from '../controller/index.js'

/** The options of the factory below: any other name is refused, not ignored. */
const MANUAL_CLOCK_OPTION_NAMES = optionNamesOf<ManualClockOptions>()('startAt')

/**
 * The most timers `runAll()` fires before it gives up: a timer that re-arms itself forever (a
 * re-assert loop with nothing to end it) is a bug to report, not a wait.
 */
export const MANUAL_CLOCK_RUN_ALL_LIMIT = 10_000

/** Options of {@link createManualClock}. */
export type ManualClockOptions = {
  /** The clock's reading at creation. Default `0`. */
  startAt?: number | undefined
}

/**
 * A deterministic {@link PtyClock} that only moves when the test moves it. Timers fire in due
 * order (ties in the order they were set), synchronously, inside `advance`/`runAll`; time never
 * passes on its own, so tests need no real sleeps.
 */
export type ManualClock = PtyClock & {
  /**
   * Move time forward by `ms`, firing every timer that falls due on the way — including timers
   * those timers set, when they fall inside the window. The reading ends at `now() + ms`.
   */
  advance(ms: number): void
  /** Fire timers in due order until none is left, moving time to each one's due time. */
  runAll(): void
  /** How many timers are set and not yet fired or cleared. */
  pendingTimerCount(): number
  /** The due time of the next timer, or `null` when none is set. */
  nextTimerAt(): number | null
}

type ManualTimer = { readonly id: number; readonly at: number; readonly callback: () => void }


/**
 * Create a {@link ManualClock}.
 *
 * @throws TypeError when `options` is not an object, holds an option other than `startAt` (naming
 * it), or `startAt` is not a finite number.
 *
 * @example
 * ```ts
 * const clock = createManualClock()
 * const controller = createPtyController({ provider, clock })
 * controller.kill(id)
 * clock.advance(STOP_UNCONFIRMED_AFTER_MS) // the unconfirmed-stop timer fires now
 * ```
 */
export function createManualClock(options: ManualClockOptions = {}): ManualClock {
  assertOptionsBag('manual clock', options, MANUAL_CLOCK_OPTION_NAMES)
  const startAt = options.startAt ?? 0
  if (typeof startAt !== 'number' || !Number.isFinite(startAt)) {
    throw new TypeError(`Expected the \`startAt\` option to be a finite number, got ${describeValue(startAt)}`)
  }
  let now = startAt
  let nextId = 1
  const timers = new Map<number, ManualTimer>()

  const nextDue = (): ManualTimer | undefined => {
    let best: ManualTimer | undefined
    for (const timer of timers.values()) {
      // Map iteration is insertion order, so a strict `<` keeps ties in the order they were set.
      if (best === undefined || timer.at < best.at) best = timer
    }
    return best
  }

  const fire = (timer: ManualTimer): void => {
    timers.delete(timer.id)
    now = Math.max(now, timer.at)
    timer.callback()
  }

  return {
    now: () => now,
    setTimeout(callback: () => void, ms: number): PtyTimerHandle {
      if (typeof callback !== 'function') {
        throw new TypeError(`Expected the \`callback\` argument to be a function, got ${describeValue(callback)}`)
      }
      // Like the global setTimeout: a negative, NaN or missing delay fires as soon as possible.
      const delay = typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? ms : 0
      const timer: ManualTimer = { id: nextId++, at: now + delay, callback }
      timers.set(timer.id, timer)
      return Object.freeze({ manualTimerId: timer.id })
    },
    clearTimeout(handle: PtyTimerHandle): void {
      if (typeof handle === 'object' && handle !== null && 'manualTimerId' in handle) {
        timers.delete((handle as { manualTimerId: number }).manualTimerId)
      }
    },
    advance(ms: number): void {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new TypeError(`Expected the \`ms\` argument to be a non-negative number, got ${describeValue(ms)}`)
      }
      const target = now + ms
      for (let timer = nextDue(); timer !== undefined && timer.at <= target; timer = nextDue()) fire(timer)
      now = target
    },
    runAll(): void {
      for (let fired = 0; ; fired += 1) {
        const timer = nextDue()
        if (timer === undefined) return
        if (fired >= MANUAL_CLOCK_RUN_ALL_LIMIT) {
          throw new Error(`runAll() gave up after ${MANUAL_CLOCK_RUN_ALL_LIMIT} timers: a timer keeps re-arming itself`)
        }
        fire(timer)
      }
    },
    pendingTimerCount: () => timers.size,
    nextTimerAt: () => nextDue()?.at ?? null,
  }
}
