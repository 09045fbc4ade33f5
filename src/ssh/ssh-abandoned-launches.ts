import { clampTimerDelay, remainingWaitMs } from '../contracts/index.js'
import { findLaunchesByNonce } from './remote-process.js'
import type { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { SSH_LOST_RECHECK_DELAY_MS, SSH_LOST_RECHECK_MAX_DELAY_MS } from './ssh-lost-sessions.js'
import { SSH_SIDE_COMMAND_TIMEOUT_MS } from './ssh-stop.js'

/** How soon a look follows one that found (and killed) something, to see it gone. */
const ABANDONED_LAUNCH_CONFIRM_MS = 100

/** One launch given up before its marker arrived, that may run on the server. */
type AbandonedLaunch = {
  /** Its nonce (`SSH_LAUNCH_NONCE_VARIABLE` in its processes' environment). */
  nonce: string
  /** When a look that finds nothing of it may let it go (epoch ms). */
  forgetAfter: number
}

/**
 * The launches a spawn gave up before their launch marker arrived — the link dropped, the exec
 * reply went down with it, or the marker came too late — and whose end the server did not report:
 * their spawns rejected with `processMayExist`, and no pid names their programs. They are looked
 * for by their nonce in the remote `/proc/<pid>/environ` (`findLaunchesByNonce`) on whatever
 * connection is open — at once, when a connection opens, and while some are left after 1 s,
 * 2 s, 4 s … up to every 60 s (the lost PTYs' schedule) — and every process found is killed
 * (`KILL`: its spawn failed, nothing will ever read it; the hang-up its terminal got did not end
 * it). A launch is let go after a look that finds nothing of it, once `settleMs` (the launch
 * timeout) passed since it was given up: a launch that had not even reached its `env` by then
 * would have timed out anyway.
 */
export class AbandonedLaunches {
  readonly #keeper: SshConnectionKeeper
  readonly #settleMs: number
  readonly #launches = new Map<string, AbandonedLaunch>()
  #pending: { timer: NodeJS.Timeout; at: number } | null = null
  #delayMs = 0
  #looking: Promise<void> | null = null
  #stopped = false

  constructor(keeper: SshConnectionKeeper, settleMs: number) {
    this.#keeper = keeper
    this.#settleMs = settleMs
  }

  /** How many launches are looked for. */
  get size(): number {
    return this.#launches.size
  }

  /** Look for the launch of `nonce` from now on (a look follows at once when a connection is open). */
  add(nonce: string): void {
    this.#launches.set(nonce, { nonce, forgetAfter: Date.now() + this.#settleMs })
    this.lookAgainAfter(0)
  }

  /** The server reported the launch's end after all: nothing to look for. */
  remove(nonce: string): void {
    this.#launches.delete(nonce)
  }

  /** Look after `delayMs` (nothing when none is looked for, or an earlier look is due). */
  lookAgainAfter(delayMs: number): void {
    const at = Date.now() + delayMs
    if (this.#stopped || this.#launches.size === 0 || (this.#pending !== null && this.#pending.at <= at)) return
    if (this.#pending !== null) clearTimeout(this.#pending.timer)
    this.#delayMs = delayMs
    const timer = setTimeout(() => {
      this.#pending = null
      if (this.#stopped) return
      void this.#look().then((found) => {
        if (this.#launches.size === 0) return
        const next = found ? ABANDONED_LAUNCH_CONFIRM_MS : Math.min(Math.max(this.#delayMs, SSH_LOST_RECHECK_DELAY_MS) * 2, SSH_LOST_RECHECK_MAX_DELAY_MS)
        // Not later than the first moment one of them may be let go.
        const firstForget = Math.min(...[...this.#launches.values()].map((launch) => launch.forgetAfter)) - Date.now()
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
    while (remainingWaitMs(deadlineEpochMs) > 0) {
      const connection = this.#keeper.openConnection()
      if (connection === null) return
      const look = await findLaunchesByNonce(connection, nonces, 'KILL', Math.min(SSH_SIDE_COMMAND_TIMEOUT_MS, remainingWaitMs(deadlineEpochMs)))
      if (look === 'unobservable') return
      if (look !== null && [...look.values()].every((found) => found.length === 0)) return
      await new Promise((resolve) => setTimeout(resolve, Math.min(ABANDONED_LAUNCH_CONFIRM_MS, remainingWaitMs(deadlineEpochMs))))
    }
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
      const now = Date.now()
      for (const launch of launches) {
        const alive = look === 'unobservable' ? [] : (look.get(launch.nonce) ?? [])
        if (alive.length > 0) found = true
        // Unobservable: nothing can find it there; kept no longer than one that is not found.
        else if (now >= launch.forgetAfter) this.#launches.delete(launch.nonce)
      }
    })().finally(() => {
      this.#looking = null
    })
    await this.#looking
    return found
  }
}
