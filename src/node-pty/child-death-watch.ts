/**
 * How often every watched child is checked even when no SIGCHLD arrived. SIGCHLD is the real
 * trigger; this is the safety net for a platform or embedding that never delivers it, and it
 * bounds how long an exit can wait for its drain to start.
 */
export const NODE_PTY_DEATH_POLL_INTERVAL_MS = 1_000

/**
 * How many sessions one poll looks at (thoroughly: one `/proc/<pid>/stat` read each), taking
 * turns: with N PTYs every one is looked at within ceil(N / 32) polls, and an idle host's poll
 * costs the same ~1 ms with 10 PTYs or 1 000 (it used to read all of them every second, ~80 ms
 * of blocked event loop at 1 000 on a loaded machine). The poll is the last line of defence:
 * the master's stream ending (the drain's look), node-pty's native exit and SIGCHLD report a
 * death first.
 */
export const NODE_PTY_DEATH_POLL_BATCH = 32

/**
 * How long the SIGCHLD listener and the poll stay installed after the last watched child is gone.
 * Installing a signal listener starts a libuv signal handle (~0.1 ms measured per spawn when done
 * for every PTY); a host that spawns back to back keeps one listener across its spawns instead,
 * and an idle host is left with none shortly after its last PTY ended.
 */
export const NODE_PTY_DEATH_WATCH_IDLE_MS = 100

/**
 * Why a check runs: `signal` on a SIGCHLD (frequent: any child of the host, many PTYs at once;
 * the check should be cheap), `poll` on the slow safety-net timer (may look thoroughly).
 */
export type ChildDeathCheckReason = 'signal' | 'poll'

/** Options of a {@link ChildDeathWatch}. */
export type ChildDeathWatchOptions = {
  /** Listen for SIGCHLD (false on Windows, which has none). */
  useSignal: boolean
  /** Linger after `setActive(false)`. Default {@link NODE_PTY_DEATH_WATCH_IDLE_MS}. */
  idleMs?: number
}

/**
 * Calls `check` whenever a child of this process may have died: after every burst of SIGCHLD (the
 * kernel sends it when any child exits; several may coalesce into one, and a burst is looked at
 * once, in the event loop's next check phase, so `check` must look at every watched child), and on a slow poll as a safety net. Active while `setActive(true)`, and for a short idle
 * delay after `setActive(false)` (see {@link NODE_PTY_DEATH_WATCH_IDLE_MS}); `stop()` ends it at once.
 *
 * Signal listeners and timers are unref'd: watching never keeps the process alive.
 */
export class ChildDeathWatch {
  readonly #check: (reason: ChildDeathCheckReason) => void
  readonly #useSignal: boolean
  readonly #idleMs: number
  #active = false
  #installed = false
  /** Whether the owner wants SIGCHLD heard (see {@link ChildDeathWatch.setSignalWanted}). */
  #signalWanted = true
  #listening = false
  #timer: NodeJS.Timeout | null = null
  #idleTimer: NodeJS.Timeout | null = null
  #signalCheck: NodeJS.Immediate | null = null
  // Why deferred to the check phase: signals arrive in bursts (50 PTYs ending at once), and
  // node-pty's own exit callbacks, which prove most deaths for free, arrive in the same poll phase
  // — one look after them covers the whole burst.
  readonly #onSignal = (): void => {
    if (this.#signalCheck !== null) return
    this.#signalCheck = setImmediate(this.#runSignalCheck)
    this.#signalCheck.unref()
  }
  readonly #runSignalCheck = (): void => {
    this.#signalCheck = null
    if (this.#installed) this.#check('signal')
  }
  readonly #onPoll = (): void => {
    this.#check('poll')
  }

  /**
   * @param check - looks at every watched child
   * @param options - whether to listen for SIGCHLD, and the idle linger
   */
  constructor(check: (reason: ChildDeathCheckReason) => void, options: ChildDeathWatchOptions) {
    this.#check = check
    this.#useSignal = options.useSignal
    this.#idleMs = options.idleMs ?? NODE_PTY_DEATH_WATCH_IDLE_MS
  }

  /** True while the SIGCHLD listener (or, without signals, the poll) is installed. */
  get installed(): boolean {
    return this.#installed
  }

  /**
   * Start watching, or stop after the idle delay (a later `setActive(true)` within it keeps the
   * listener). Idempotent.
   */
  setActive(active: boolean): void {
    if (active === this.#active) return
    this.#active = active
    if (active) {
      if (this.#idleTimer !== null) clearTimeout(this.#idleTimer)
      this.#idleTimer = null
      this.#install()
    } else if (this.#installed && this.#idleTimer === null) {
      this.#idleTimer = setTimeout(() => {
        this.#idleTimer = null
        if (!this.#active) this.#uninstall()
      }, this.#idleMs)
      this.#idleTimer.unref()
    }
  }

  /**
   * Whether SIGCHLD should be heard while watching (default `true`): `false` when every watched
   * child's death is reported some other way, so the poll alone stays as the safety net. Why it
   * matters: a SIGCHLD listener makes the kernel deliver the signal on every child's death — a
   * signal frame, libuv's self-pipe write and read, and a look at every watched child — work raw
   * node-pty never pays (issue 18, concurrent spawns). Takes effect at once.
   */
  setSignalWanted(wanted: boolean): void {
    if (wanted === this.#signalWanted) return
    this.#signalWanted = wanted
    if (!this.#installed) return
    if (wanted) this.#listen()
    else this.#unlisten()
  }

  /** Stop watching now, without the idle delay (the owner is disposed). */
  stop(): void {
    this.#active = false
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer)
    this.#idleTimer = null
    this.#uninstall()
  }

  #install(): void {
    if (this.#installed) return
    this.#installed = true
    if (this.#signalWanted) this.#listen()
    this.#timer = setInterval(this.#onPoll, NODE_PTY_DEATH_POLL_INTERVAL_MS)
    this.#timer.unref()
  }

  #uninstall(): void {
    if (!this.#installed) return
    this.#installed = false
    this.#unlisten()
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
  }

  #listen(): void {
    if (!this.#useSignal || this.#listening) return
    try {
      process.on('SIGCHLD', this.#onSignal)
      this.#listening = true
    } catch {
      // No SIGCHLD here: the poll alone will do.
    }
  }

  #unlisten(): void {
    if (this.#listening) process.off('SIGCHLD', this.#onSignal)
    this.#listening = false
    if (this.#signalCheck !== null) clearImmediate(this.#signalCheck)
    this.#signalCheck = null
  }
}
