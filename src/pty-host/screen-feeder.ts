import type { ScreenCursor, ScreenScheduler } from './screen-cursor.js'

/**
 * How many output chars per second the host's headless screens parse in the background, all
 * sessions together, by default (2 Mi chars/s). xterm's parser costs 20–26 ms of CPU per MB here
 * (plain text to `ls`-like colored lines), so the budget is ~5 % of one core whatever the number of
 * sessions — and above the sustained rate of interactive programs and build logs, whose screens
 * therefore stay current. A flood runs past it; its screen catches up while its app holds it (in
 * slices of `PTY_HOST_SCREEN_HELD_SLICE_CHARS`), when it goes idle or when it is snapshotted,
 * and what the ring drops before that is skipped (and counted).
 */
export const PTY_HOST_DEFAULT_SCREEN_CHARS_PER_SECOND = 2 * 1024 * 1024

/** The feeder looks at its sessions this often while any has output to parse. */
export const PTY_HOST_SCREEN_FEED_TICK_MS = 20

/**
 * A session that produced no output for this long is idle: its screen parses everything pending
 * (outside the budget). Long enough that a flood's short stalls (a busy machine) do not count,
 * short enough that a screen is current a moment after the output stops. Time its PTY spends
 * paused by flow control never counts ({@link ScreenCursor.quietLooks}).
 */
export const PTY_HOST_SCREEN_IDLE_MS = 100

/**
 * While flow control holds sessions' PTYs, their screens parse up to this many chars per tick in
 * all, outside the budget (128 Ki chars: ~3 ms of xterm's parse here; 6.4 Mi chars/s at most,
 * ~15 % of one core, however many sessions are held). Held screens take turns: the one fed goes to
 * the back of the line. Why: a slow app's output arrives in bursts of up to a ring (the
 * acknowledgement window), each one outpacing the screen; the holds between them are the screen's
 * chance to catch up before the next burst evicts what it has not reached (in a simulation of the
 * host's flow at its default sizes, a 20 MB flood acknowledged at 1.5–5 MB/s skipped nothing after
 * its first burst). In slices, so no tick blocks the host for a whole ring (~40 ms).
 */
export const PTY_HOST_SCREEN_HELD_SLICE_CHARS = 128 * 1024

/** The budget saved up while no ticks ran is capped at this many seconds' worth. */
const BURST_SECONDS = 0.1

/** A clock in milliseconds (injectable for tests). */
export type MillisecondClock = () => number

/** Options of {@link ScreenFeeder}. */
export type ScreenFeederOptions = {
  /** The background budget, chars per second, all sessions together. */
  charsPerSecond: number
  /** Schedules a tick (default: an unref'd `setTimeout`); returns its cancel. */
  setTimer?: (run: () => void, ms: number) => () => void
  /** Default `performance.now`. */
  now?: MillisecondClock
}

function defaultTimer(run: () => void, ms: number): () => void {
  const timer = setTimeout(run, ms)
  timer.unref()
  return () => clearTimeout(timer)
}

/**
 * The host's one scheduler of headless-screen parsing: a token bucket of `charsPerSecond` shared
 * by every session with output to parse. Every {@link PTY_HOST_SCREEN_FEED_TICK_MS} while any
 * session has some, it
 *
 * - hands the sessions whose PTYs flow control holds (their apps are behind) one slice of
 *   {@link PTY_HOST_SCREEN_HELD_SLICE_CHARS} in all, outside the budget, taking turns;
 * - hands a session that produced no output for {@link PTY_HOST_SCREEN_IDLE_MS} while its PTY was
 *   not held (it is idle) everything it has pending, outside the budget (at most the ring's size);
 * - shares the budget saved since the previous tick among the sessions still producing, except
 *   those whose output outruns their screen ({@link ScreenCursor.outpaced}: more than half their
 *   ring pending, a flood): their parsing would be skipped anyway, so they wait until idle.
 *
 * No timer runs while no screen has anything to parse.
 */
export class ScreenFeeder implements ScreenScheduler {
  readonly #charsPerSecond: number
  readonly #setTimer: (run: () => void, ms: number) => () => void
  readonly #now: MillisecondClock
  readonly #pending = new Set<ScreenCursor>()
  #cancelTimer: (() => void) | null = null
  #tokens: number
  #lastTickAt: number

  /** A feeder with the given budget. */
  constructor(options: ScreenFeederOptions) {
    this.#charsPerSecond = options.charsPerSecond
    this.#setTimer = options.setTimer ?? defaultTimer
    this.#now = options.now ?? (() => performance.now())
    this.#tokens = this.#burst
    this.#lastTickAt = this.#now()
  }

  get #burst(): number {
    return this.#charsPerSecond * BURST_SECONDS
  }

  /** How many sessions have output waiting to be parsed. */
  get pendingSessions(): number {
    return this.#pending.size
  }

  /** See {@link ScreenScheduler.schedule}. */
  schedule(cursor: ScreenCursor): void {
    this.#pending.add(cursor)
    cursor.markScheduled(true)
    if (this.#cancelTimer === null) this.#cancelTimer = this.#setTimer(this.#tick, PTY_HOST_SCREEN_FEED_TICK_MS)
  }

  /** See {@link ScreenScheduler.forget}. */
  forget(cursor: ScreenCursor): void {
    this.#pending.delete(cursor)
    cursor.markScheduled(false)
    if (this.#pending.size === 0) this.#stopTimer()
  }

  /** Stop ticking and forget every session (the host is closing). */
  dispose(): void {
    for (const cursor of this.#pending) cursor.markScheduled(false)
    this.#pending.clear()
    this.#stopTimer()
  }

  #stopTimer(): void {
    this.#cancelTimer?.()
    this.#cancelTimer = null
  }

  readonly #tick = (): void => {
    this.#cancelTimer = null
    const now = this.#now()
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#lastTickAt) / 1000) * this.#charsPerSecond)
    this.#lastTickAt = now
    const producing: ScreenCursor[] = []
    const held: ScreenCursor[] = []
    for (const cursor of this.#pending) {
      const quiet = cursor.quietLooks()
      if (cursor.producerHeld) {
        held.push(cursor)
        continue
      }
      if (quiet * PTY_HOST_SCREEN_FEED_TICK_MS >= PTY_HOST_SCREEN_IDLE_MS) cursor.catchUp()
      if (cursor.pendingChars === 0) this.forget(cursor)
      else if (!cursor.outpaced) producing.push(cursor)
    }
    // The held screens share one slice, in line order; each one fed goes to the back of the line.
    let slice = PTY_HOST_SCREEN_HELD_SLICE_CHARS
    for (let index = 0; index < held.length && slice > 0; index++) {
      const cursor = held[index]!
      slice -= cursor.feed(slice)
      this.#pending.delete(cursor)
      if (cursor.pendingChars > 0) this.#pending.add(cursor)
      else this.forget(cursor)
    }
    for (let index = 0; index < producing.length && this.#tokens >= 1; index++) {
      const cursor = producing[index]!
      const share = Math.ceil(this.#tokens / (producing.length - index))
      this.#tokens -= cursor.feed(share)
      if (cursor.pendingChars === 0) this.forget(cursor)
    }
    if (this.#pending.size > 0 && this.#cancelTimer === null) this.#cancelTimer = this.#setTimer(this.#tick, PTY_HOST_SCREEN_FEED_TICK_MS)
  }
}
