/**
 * How often every watched child is checked even when no SIGCHLD arrived. SIGCHLD is the real
 * trigger; this is the safety net for a platform or embedding that never delivers it, and it
 * bounds how long an exit can wait for its drain to start.
 */
export const NODE_PTY_DEATH_POLL_INTERVAL_MS = 1_000

/**
 * Calls `check` whenever a child of this process may have died: on every SIGCHLD (the kernel sends
 * it when any child exits; several may coalesce into one, so `check` must look at every watched
 * child), and on a slow poll as a safety net. Active only while `setActive(true)`.
 *
 * Signal listeners and the poll timer are unref'd: watching never keeps the process alive.
 */
export class ChildDeathWatch {
  readonly #check: () => void
  readonly #useSignal: boolean
  #active = false
  #timer: NodeJS.Timeout | null = null
  readonly #onSignal = (): void => {
    this.#check()
  }

  /**
   * @param check - looks at every watched child
   * @param useSignal - listen for SIGCHLD (false on Windows, which has none)
   */
  constructor(check: () => void, useSignal: boolean) {
    this.#check = check
    this.#useSignal = useSignal
  }

  /** Start or stop watching. Idempotent. */
  setActive(active: boolean): void {
    if (active === this.#active) return
    this.#active = active
    if (active) {
      if (this.#useSignal) {
        try {
          process.on('SIGCHLD', this.#onSignal)
        } catch {
          // No SIGCHLD here: the poll alone will do.
        }
      }
      this.#timer = setInterval(this.#check, NODE_PTY_DEATH_POLL_INTERVAL_MS)
      this.#timer.unref()
    } else {
      if (this.#useSignal) process.off('SIGCHLD', this.#onSignal)
      if (this.#timer !== null) clearInterval(this.#timer)
      this.#timer = null
    }
  }
}
