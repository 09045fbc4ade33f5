import type { PtyBytesEvent, PtyDataEvent, PtyExitEvent, PtyOutputLossEvent, PtyProvider } from '../contracts/index.js'

/**
 * The most output chars the controller holds for PTYs whose spawn may still be in flight. Past it
 * the oldest held output is dropped (and reported). Why: only a hung spawn plus a chatty PTY the
 * controller does not track can fill it — ten default high watermarks is far more than a PTY
 * produces between its physical start and its publication, and small enough not to pin a host's
 * memory.
 */
export const IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS = 1_000_000

/** A provider event held for a spawn in flight. */
export type HeldProviderEvent =
  | { kind: 'data'; provider: PtyProvider; event: PtyDataEvent }
  | { kind: 'bytes'; provider: PtyProvider; event: PtyBytesEvent }
  | { kind: 'loss'; provider: PtyProvider; event: PtyOutputLossEvent }
  | { kind: 'exit'; provider: PtyProvider; event: PtyExitEvent }

type Entry = HeldProviderEvent & { seq: number }

/** The output an entry holds, in its own unit (chars of text, bytes); 0 for an exit or a loss. */
function outputLength(entry: HeldProviderEvent): number {
  if (entry.kind === 'data') return entry.event.data.length
  return entry.kind === 'bytes' ? entry.event.bytes.length : 0
}

/** Whether an entry holds output (which the cap may drop); exits and losses are tiny and always kept. */
function holdsOutput(entry: HeldProviderEvent): boolean {
  return entry.kind === 'data' || entry.kind === 'bytes'
}

/** One spawn (or attach) in flight: its token, and the mark of the first event it may claim. */
export type InFlightSpawn = {
  /** Pass it to {@link InFlightEventBuffer.end}. */
  readonly token: symbol
  /** Events held from this mark on arrived after the spawn started. */
  readonly since: number
}

/**
 * Provider events for ids the controller does not track yet, held while spawns are in flight so
 * that a PTY's early output and exit are delivered right after its `spawn` event.
 *
 * An event can belong only to a spawn that was in flight when it arrived: a spawn claims only
 * events held since it started, and an event is dropped once every spawn in flight at its arrival
 * has ended. Output is bounded by a char cap (oldest output dropped first; exits, which are tiny
 * and decide a PTY's fate, and output-loss reports, which keep its sequence, are never dropped).
 */
export class InFlightEventBuffer {
  readonly #maxChars: number
  readonly #onDrop: (event: { id: string }) => void
  readonly #spawns = new Map<symbol, number>()
  #entries: Entry[] = []
  #nextSeq = 0
  #heldChars = 0
  #dropping = false

  /**
   * Hold at most `maxChars` output chars. `onDrop` hears of the first output event the cap drops,
   * and again only after every spawn in flight then has ended.
   */
  constructor(maxChars: number, onDrop: (event: { id: string }) => void) {
    this.#maxChars = maxChars
    this.#onDrop = onDrop
  }

  /** A spawn starts: events from now on may be its own. */
  begin(): InFlightSpawn {
    const spawn = { token: Symbol('spawn'), since: this.#nextSeq }
    this.#spawns.set(spawn.token, spawn.since)
    return spawn
  }

  /** A spawn ended (published or failed); idempotent. Drops events no spawn in flight can claim. */
  end(token: symbol): void {
    if (!this.#spawns.delete(token)) return
    if (this.#entries.length === 0) {
      // Nothing held (the usual case): nothing to trim.
      if (this.#spawns.size === 0) this.#dropping = false
      return
    }
    let floor = Number.POSITIVE_INFINITY
    for (const since of this.#spawns.values()) floor = Math.min(floor, since)
    this.#keep((entry) => entry.seq >= floor)
    if (this.#spawns.size === 0) this.#dropping = false
  }

  /** Hold an event if some spawn is in flight; returns whether it was held. */
  hold(held: HeldProviderEvent): boolean {
    if (this.#spawns.size === 0) return false
    this.#entries.push({ ...held, seq: this.#nextSeq++ })
    if (holdsOutput(held)) {
      this.#heldChars += outputLength(held)
      if (this.#heldChars > this.#maxChars) this.#dropOldestOutput()
    }
    return true
  }

  /**
   * Take, in arrival order, the events of `provider`'s `ptyId` that arrived since `since` and that
   * `belongs` accepts; the rest stay held for other spawns.
   */
  take(provider: PtyProvider, ptyId: string, since: number, belongs: (held: HeldProviderEvent) => boolean): HeldProviderEvent[] {
    const taken: HeldProviderEvent[] = []
    if (this.#entries.length === 0) return taken
    this.#keep((entry) => {
      if (entry.seq < since || entry.provider !== provider || entry.event.id !== ptyId || !belongs(entry)) return true
      taken.push(entry)
      return false
    })
    return taken
  }

  /** Drop everything and forget every spawn (on dispose). */
  clear(): void {
    this.#spawns.clear()
    this.#entries = []
    this.#heldChars = 0
    this.#dropping = false
  }

  #keep(predicate: (entry: Entry) => boolean): void {
    const kept: Entry[] = []
    let chars = 0
    for (const entry of this.#entries) {
      if (!predicate(entry)) continue
      kept.push(entry)
      chars += outputLength(entry)
    }
    this.#entries = kept
    this.#heldChars = chars
  }

  #dropOldestOutput(): void {
    const dropped: { id: string }[] = []
    let excess = this.#heldChars - this.#maxChars
    this.#keep((entry) => {
      if (excess <= 0 || !holdsOutput(entry)) return true
      excess -= outputLength(entry)
      dropped.push(entry.event)
      return false
    })
    const [first] = dropped
    // Why once per episode: a flood past the cap would otherwise report every chunk it drops.
    if (first !== undefined && !this.#dropping) {
      this.#dropping = true
      this.#onDrop(first)
    }
  }
}
