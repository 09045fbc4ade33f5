import { clampTimerDelay, remainingWaitMs } from '../contracts/index.js'
import { findLaunchesByNonce } from './remote-process.js'
import type { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { SSH_LOST_RECHECK_DELAY_MS, SSH_LOST_RECHECK_MAX_DELAY_MS } from './ssh-lost-sessions.js'
import { SSH_SIDE_COMMAND_TIMEOUT_MS } from './ssh-stop.js'
import { onWaitClock } from '../contracts/deadline.js'

/** How soon a look follows one that found (and killed) something, to see it gone. */
const ABANDONED_LAUNCH_CONFIRM_MS = 100
/**
 * How many looks in a row may find something of a launch still alive after its `KILL` (a process
 * in uninterruptible sleep, `D`, dies only when its I/O returns) before it is given up; each such
 * look waits twice as long as the one before (100 ms, 200 ms … ≈ 50 s in all).
 */
export const ABANDONED_LAUNCH_MAX_KILL_LOOKS = 10

/** One launch given up before its marker arrived, that may run on the server. */
type AbandonedLaunch = {
  /** Its nonce (`SSH_LAUNCH_NONCE_VARIABLE` in its processes' environment). */
  nonce: string
  /** When a look that finds nothing of it may let it go (`performance.now()` ms: a wall-clock jump must not let it go early). */
  forgetAfter: number
  /** How many looks in a row found (and signalled) something of it alive. */
  killLooks: number
}

/** Why a launch was let go while something of it may run (see {@link AbandonedLaunches.notStopped}). */
export type AbandonedLaunchLeft = {
  nonce: string
  /**
   * `seen`: processes hold its nonce but its session could not be told, so nothing was signalled;
   * `survived`: its processes were still alive after {@link ABANDONED_LAUNCH_MAX_KILL_LOOKS} looks.
   */
  reason: 'seen' | 'survived'
}

/**
 * The launches a spawn gave up before their launch marker arrived — the link dropped, the exec
 * reply went down with it, or the marker came too late — and whose end the server did not report:
 * their spawns rejected with `processMayExist`, and no pid names their programs. They are looked
 * for by their nonce in the remote `/proc/<pid>/environ` (`findLaunchesByNonce`) on whatever
 * connection is open — at once, when a connection opens, and while some are left after 1 s,
 * 2 s, 4 s … up to every 60 s (the lost PTYs' schedule) — and every process of the launch's own
 * session and group is killed (`KILL`: its spawn failed, nothing will ever read it; the hang-up its
 * terminal got did not end it); what it started in sessions of its own is left alone. A look that
 * killed something is followed after 100 ms, then 200 ms … and a launch still found alive after
 * {@link ABANDONED_LAUNCH_MAX_KILL_LOOKS} such looks is given up. A launch is let go after a look
 * that finds nothing of it to kill, once `settleMs` (the launch timeout) passed since it was given
 * up: a launch that had not even reached its `env` by then would have timed out anyway.
 */
export class AbandonedLaunches {
  readonly #keeper: SshConnectionKeeper
  readonly #settleMs: number
  readonly #launches = new Map<string, AbandonedLaunch>()
  #pending: { timer: NodeJS.Timeout; at: number } | null = null
  #delayMs = 0
  #looking: Promise<void> | null = null
  #stopped = false
  #killLooks = 0
  readonly #notStopped: AbandonedLaunchLeft[] = []

  constructor(keeper: SshConnectionKeeper, settleMs: number) {
    this.#keeper = keeper
    this.#settleMs = settleMs
  }

  /** How many launches are looked for. */
  get size(): number {
    return this.#launches.size
  }

  /** The launches let go while something of them may run, and why (the latest 100). */
  get notStopped(): readonly AbandonedLaunchLeft[] {
    return this.#notStopped
  }

  /** Look for the launch of `nonce` from now on (a look follows at once when a connection is open). */
  add(nonce: string): void {
    this.#launches.set(nonce, { nonce, forgetAfter: performance.now() + this.#settleMs, killLooks: 0 })
    this.lookAgainAfter(0)
  }

  /** The server reported the launch's end after all: nothing to look for. */
  remove(nonce: string): void {
    this.#launches.delete(nonce)
  }

  /** Look after `delayMs` (nothing when none is looked for, or an earlier look is due). */
  lookAgainAfter(delayMs: number): void {
    const at = performance.now() + delayMs
    if (this.#stopped || this.#launches.size === 0 || (this.#pending !== null && this.#pending.at <= at)) return
    if (this.#pending !== null) clearTimeout(this.#pending.timer)
    this.#delayMs = delayMs
    const timer = setTimeout(() => {
      this.#pending = null
      if (this.#stopped) return
      void this.#look().then((found) => {
        if (this.#launches.size === 0) return
        if (found) this.#killLooks += 1
        else this.#killLooks = 0
        const next = found ? ABANDONED_LAUNCH_CONFIRM_MS * 2 ** (this.#killLooks - 1) : Math.min(Math.max(this.#delayMs, SSH_LOST_RECHECK_DELAY_MS) * 2, SSH_LOST_RECHECK_MAX_DELAY_MS)
        // Not later than the first moment one of them may be let go.
        const firstForget = Math.min(...[...this.#launches.values()].map((launch) => launch.forgetAfter)) - performance.now()
        this.lookAgainAfter(Math.max(0, Math.min(next, Math.max(firstForget, ABANDONED_LAUNCH_CONFIRM_MS))))
      })
    }, clampTimerDelay(delayMs))
    timer.unref()
    this.#pending = { timer, at }
  }

  /**
   * The provider is being disposed: no more scheduled looks; look (and kill) until a look finds
   * nothing of the abandoned launches nor of `alsoNonces` (launches of spawns still in flight,
   * their markers not seen), or no connection is open, or `deadlineEpochMs` passed.
   */
  async stopAtDisposal(deadlineEpochMs: number, alsoNonces: readonly string[] = []): Promise<void> {
    this.#stopped = true
    if (this.#pending !== null) clearTimeout(this.#pending.timer)
    this.#pending = null
    await this.#looking
    const nonces = [...new Set([...this.#launches.keys(), ...alsoNonces])]
    if (nonces.length === 0) return
    // From here on, on the timers' monotonic clock (a frozen or stepped-back `Date` kept looking).
    const until = onWaitClock(deadlineEpochMs)
    const left = (): number => remainingWaitMs(until, performance.now())
    while (left() > 0) {
      const connection = this.#keeper.openConnection()
      if (connection === null) return
      const look = await findLaunchesByNonce(connection, nonces, 'KILL', Math.min(SSH_SIDE_COMMAND_TIMEOUT_MS, left()))
      if (look === 'unobservable') return
      if (look !== null && [...look.values()].every((found) => found.signalled.length === 0)) return
      await new Promise((resolve) => setTimeout(resolve, Math.min(ABANDONED_LAUNCH_CONFIRM_MS, left())))
    }
  }

  #letGo(nonce: string, reason: AbandonedLaunchLeft['reason'] | null): void {
    this.#launches.delete(nonce)
    if (reason === null) return
    this.#notStopped.push({ nonce, reason })
    if (this.#notStopped.length > 100) this.#notStopped.shift()
  }

  /** One look on the open connection (none open: nothing); resolves whether it found anything. */
  async #look(): Promise<boolean> {
    if (this.#looking !== null) {
      await this.#looking
      return true
    }
    let found = false
    this.#looking = (async () => {
      const connection = this.#keeper.openConnection()
      const launches = [...this.#launches.values()]
      if (connection === null || launches.length === 0) return
      const look = await findLaunchesByNonce(connection, launches.map((launch) => launch.nonce), 'KILL', SSH_SIDE_COMMAND_TIMEOUT_MS)
      if (look === null) return
      const now = performance.now()
      for (const launch of launches) {
        const finding = look === 'unobservable' ? undefined : look.get(launch.nonce)
        if (finding !== undefined && finding.signalled.length > 0) {
          launch.killLooks += 1
          if (launch.killLooks < ABANDONED_LAUNCH_MAX_KILL_LOOKS) found = true
          else this.#letGo(launch.nonce, 'survived')
          continue
        }
        launch.killLooks = 0
        // Unobservable: nothing can find it there; kept no longer than one that is not found.
        // Seen but its session unknown: nothing is signalled blindly; let go as one not found.
        if (now >= launch.forgetAfter) this.#letGo(launch.nonce, finding?.unreachable === true ? 'seen' : null)
      }
    })().finally(() => {
      this.#looking = null
    })
    await this.#looking
    return found
  }
}
