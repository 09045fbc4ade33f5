import { mapBounded, NODE_PTY_PROC_READS_IN_FLIGHT } from './bounded-map.js'

/**
 * One shared pass of OS reads for every listing in flight that needs details, whatever asks for it
 * (a host's `listProcesses`, a spawn's proof of a slot owner; a stop verification asks for
 * membership only and joins none).
 *
 * A caller asks for the details of some keys; it joins the **next** pass (one that starts after
 * the call, so the answer is never older than the question). While a pass runs, new callers
 * queue for the one after it; when it ends, one pass serves all of them, reading each key once.
 * Before this, every listing read every PTY on its own: a thousand concurrent stops verified by
 * a thousand listings of up to a thousand rows each.
 */
export class ListingPasses<K, V> {
  readonly #read: (key: K) => Promise<V>
  #running: Promise<void> | null = null
  /** The keys and waiters of the pass that starts next. */
  #next: { keys: Set<K>; results: Map<K, V>; done: Promise<void>; start: () => void } | null = null
  #passes = 0

  /** @param read - reads one key's value; must not reject (answer a "cannot say" value instead) */
  constructor(read: (key: K) => Promise<V>) {
    this.#read = read
  }

  /** How many passes were made (for tests and the benchmark). */
  get passes(): number {
    return this.#passes
  }

  /**
   * The values of `keys` from a pass that starts after this call. Returns at once a map that the
   * pass fills as each read finishes (so a caller with a deadline can take what is there), and a
   * promise of the pass's end.
   */
  request(keys: Iterable<K>): { results: ReadonlyMap<K, V>; done: Promise<void> } {
    let next = this.#next
    if (next === null) {
      let start: () => void = () => {}
      const started = new Promise<void>((resolve) => {
        start = resolve
      })
      const results = new Map<K, V>()
      const pass = { keys: new Set<K>(), results, start, done: Promise.resolve() }
      pass.done = started.then(() => this.#run(pass.keys, results))
      next = pass
      this.#next = pass
      if (this.#running === null) this.#startNext()
    }
    for (const key of keys) next.keys.add(key)
    return { results: next.results, done: next.done }
  }

  #startNext(): void {
    const next = this.#next
    if (next === null) return
    this.#running = next.done.finally(() => {
      this.#running = null
      this.#startNext()
    })
    // Why a microtask: the callers of this turn (a burst of stops ending together) join it too.
    queueMicrotask(() => {
      if (this.#next === next) this.#next = null
      next.start()
    })
  }

  async #run(keys: ReadonlySet<K>, results: Map<K, V>): Promise<void> {
    this.#passes += 1
    // Bounded: each read holds a descriptor or two while it waits (see NODE_PTY_PROC_READS_IN_FLIGHT).
    await mapBounded([...keys], NODE_PTY_PROC_READS_IN_FLIGHT, async (key) => {
      results.set(key, await this.#read(key))
    })
  }
}
