/**
 * Waits for exits by PTY id, for the bench's profiling drivers: a short-lived child's exit event
 * can arrive before its spawn reply, so the promise is made by whichever comes first.
 */
export class ExitWaits {
  readonly #waits = new Map<string, { done: Promise<void>; resolve: () => void }>()

  #entry(id: string): { done: Promise<void>; resolve: () => void } {
    let entry = this.#waits.get(id)
    if (entry === undefined) {
      let resolve!: () => void
      const done = new Promise<void>((r) => {
        resolve = r
      })
      entry = { done, resolve }
      this.#waits.set(id, entry)
    }
    return entry
  }

  /** The exit event of `id` arrived. */
  exited(id: string): void {
    this.#entry(id).resolve()
  }

  /** Resolves at the exit of `id` (at once if it came already), and forgets it then. */
  async exitOf(id: string): Promise<void> {
    await this.#entry(id).done
    this.#waits.delete(id)
  }
}
