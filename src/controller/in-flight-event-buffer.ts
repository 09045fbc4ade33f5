import type { PtyBytesEvent, PtyDataEvent, PtyExitEvent, PtyOutputLossEvent, PtyProvider } from '../contracts/index.js'

/**
 * The most output chars the controller holds for PTYs whose spawn may still be in flight (and for
 * PTYs whose stop stands unverified, while any spawn is in flight: a re-attach may revive them).
 * Past it the oldest held output is dropped: reported on `error`, and as an `outputLoss` by the
 * spawn that publishes the PTY. Why this size: only a hung spawn plus a chatty PTY can fill it —
 * ten default high watermarks is far more than a PTY produces between its physical start and its
 * publication, and small enough not to pin a host's memory.
 */
export const IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS = 1_000_000

/**
 * Where output the cap dropped stood among the held events: `chars` chars (bytes) of one PTY's
 * output, in the order they arrived, so the spawn that publishes the PTY reports them as a gap.
 */
export type DroppedOutput = {
  /** The PTY id. */
  id: string
  /** The incarnation the dropped output named, if any. */
  incarnationId?: PtyDataEvent['incarnationId']
  /** How many chars were dropped (bytes, for a PTY whose provider delivers bytes). */
  chars: number
}

/** A provider event held for a spawn in flight, or the place of output the cap dropped. */
export type HeldProviderEvent =
  | { kind: 'data'; provider: PtyProvider; event: PtyDataEvent }
  | { kind: 'bytes'; provider: PtyProvider; event: PtyBytesEvent }
  | { kind: 'loss'; provider: PtyProvider; event: PtyOutputLossEvent }
  | { kind: 'dropped'; provider: PtyProvider; event: DroppedOutput }
  | { kind: 'exit'; provider: PtyProvider; event: PtyExitEvent }

type Entry = HeldProviderEvent & { seq: number }

/** The output an entry holds, in its own unit (chars of text, bytes); 0 for an exit, a loss or a drop mark. */
function outputLength(entry: HeldProviderEvent): number {
  if (entry.kind === 'data') return entry.event.data.length
  return entry.kind === 'bytes' ? entry.event.bytes.length : 0
}

/** Whether an entry holds output (which the cap may drop); exits, losses and drop marks are tiny and always kept. */
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
 * events held since it started, and an event is discarded (`onDiscard`) once every spawn in flight
 * at its arrival has ended. Output is bounded by a char cap: the oldest output is dropped first and
 * a `dropped` mark of its size keeps its place, so the PTY's sequence can move past it; exits,
 * which are tiny and decide a PTY's fate, and output-loss reports are never dropped.
 */
export class InFlightEventBuffer {
  readonly #maxChars: number
  readonly #onDrop: (event: { id: string }) => void
  readonly #onDiscard: (held: HeldProviderEvent) => void
  readonly #spawns = new Map<symbol, number>()
  #entries: Entry[] = []
  #nextSeq = 0
  #heldChars = 0
  #dropping = false

  /**
   * Hold at most `maxChars` output chars. `onDrop` hears of the first output event the cap drops,
   * and again only after every spawn in flight then has ended. `onDiscard` hears of every held
   * event (or drop mark) no spawn claimed, when the last spawn that could have is over.
   */
  constructor(maxChars: number, onDrop: (event: { id: string }) => void, onDiscard: (held: HeldProviderEvent) => void = () => undefined) {
    this.#maxChars = maxChars
    this.#onDrop = onDrop
    this.#onDiscard = onDiscard
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
    const discarded: HeldProviderEvent[] = []
    this.#keep((entry) => {
      if (entry.seq >= floor) return true
      discarded.push(entry)
      return false
    })
    if (this.#spawns.size === 0) this.#dropping = false
    for (const held of discarded) this.#onDiscard(held)
  }

  /** Whether a spawn is in flight, so that {@link InFlightEventBuffer.hold} would hold an event. */
  get holding(): boolean {
    return this.#spawns.size > 0
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

  /**
   * Whether a spawn in flight began after the event at `from` and by the one at `to`: it may claim
   * the later event and not the earlier, so their drops must not share one mark.
   */
  #spawnBeganBetween(from: number, to: number): boolean {
    for (const since of this.#spawns.values()) if (since > from && since <= to) return true
    return false
  }

  #dropOldestOutput(): void {
    const dropped: { id: string }[] = []
    let excess = this.#heldChars - this.#maxChars
    const kept: Entry[] = []
    let chars = 0
    // Per provider and id, the last entry kept so far: a drop right after that PTY's own mark
    // (whatever other PTYs' events lie between) grows the mark instead of adding one.
    const lastKept = new Map<PtyProvider, Map<string, Entry>>()
    const keep = (entry: Entry): void => {
      kept.push(entry)
      let ofProvider = lastKept.get(entry.provider)
      if (ofProvider === undefined) lastKept.set(entry.provider, (ofProvider = new Map()))
      ofProvider.set(entry.event.id, entry)
    }
    for (const entry of this.#entries) {
      if (excess <= 0 || !holdsOutput(entry)) {
        keep(entry)
        chars += outputLength(entry)
        continue
      }
      const length = outputLength(entry)
      excess -= length
      dropped.push(entry.event)
      // The place of what was dropped stays, one mark per run of one PTY's output.
      const previous = lastKept.get(entry.provider)?.get(entry.event.id)
      const incarnationId = entry.event.incarnationId
      if (previous?.kind === 'dropped' && previous.event.incarnationId === incarnationId && !this.#spawnBeganBetween(previous.seq, entry.seq)) {
        previous.event.chars += length
      } else {
        const mark: DroppedOutput = incarnationId === undefined ? { id: entry.event.id, chars: length } : { id: entry.event.id, incarnationId, chars: length }
        keep({ kind: 'dropped', provider: entry.provider, event: mark, seq: entry.seq })
      }
    }
    this.#entries = kept
    this.#heldChars = chars
    const [first] = dropped
    // Why once per episode: a flood past the cap would otherwise report every chunk it drops.
    if (first !== undefined && !this.#dropping) {
      this.#dropping = true
      this.#onDrop(first)
    }
  }
}
