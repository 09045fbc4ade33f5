import type { PtyTimerHandle } from './clock.js'
import type { ControllerTimers } from './controller-timers.js'
import type { PtyRecord } from './pty-record.js'

/** A chunk of a PTY's output as the controller publishes it: text, or bytes from a bytes-mode provider. */
export type OutputChunk = string | Uint8Array

/** Publishes one (possibly merged) chunk of a record's output with the sequence after it. */
export type PublishOutput = (record: PtyRecord, chunk: OutputChunk, seq: number) => void

/** One PTY's open window: the chunks waiting for its end, and the sequence after the last. */
type Window = {
  pending: OutputChunk[]
  seq: number
  timer: PtyTimerHandle | undefined
}

/**
 * The `dataBatchMs` coalescing of the controller's output events (VS Code's data bufferer, with a
 * leading edge). Per PTY incarnation:
 *
 * - the first chunk after a quiet spell is published at once, and opens a window of `windowMs`;
 * - chunks arriving while the window is open are held; when it ends they go out as one event
 *   (merged in arrival order, with the sequence of the last) and a new window opens; a window that
 *   ends with nothing held closes, so the next chunk goes out at once again;
 * - {@link OutputBatcher.flush} publishes what is held at once and closes the window: the controller
 *   calls it before it publishes the incarnation's exit (or supersedes it), so output never crosses
 *   an exit, and {@link OutputBatcher.flushAll} on dispose.
 *
 * Why a leading edge: an interactive echo or a prompt after a quiet spell is not delayed at all;
 * only a stream that keeps producing within the window is merged, which is where the event count
 * matters (a flood of 4 KB reads becomes one event per window).
 */
export class OutputBatcher {
  readonly #windowMs: number
  readonly #timers: ControllerTimers
  readonly #publishNow: PublishOutput
  readonly #publish: PublishOutput
  readonly #windows = new Map<PtyRecord, Window>()
  /** Set by {@link OutputBatcher.flushAll}: from then on every chunk goes out at once, unbatched. */
  #closed = false

  /**
   * `publishNow` publishes a window's first chunk, from inside the delivery of the provider's
   * output; `publish` a coalesced window, from a timer, a flush or dispose (it makes its own
   * delivery of the PTY's events).
   */
  constructor(windowMs: number, timers: ControllerTimers, publishNow: PublishOutput, publish: PublishOutput) {
    this.#windowMs = windowMs
    this.#timers = timers
    this.#publishNow = publishNow
    this.#publish = publish
  }

  /** A chunk of `record`'s output, with the output sequence after it. */
  push(record: PtyRecord, chunk: OutputChunk, seq: number): void {
    const window = this.#windows.get(record)
    if (window === undefined) {
      // After dispose's flush no window opens: no timer would end it (the controller's timers are
      // cancelled), so what it held would be lost.
      if (this.#closed) return this.#publishNow(record, chunk, seq)
      const opened: Window = { pending: [], seq, timer: undefined }
      this.#windows.set(record, opened)
      try {
        this.#publishNow(record, chunk, seq)
      } finally {
        // Armed after the leading edge is published: after a quiet spell the window's timer is
        // the first of its duration (Node makes a timer list and re-arms libuv's timer), cold
        // work the echo need not wait for. Not when a listener closed the window meanwhile (an
        // exit it caused flushed it); a chunk a listener caused meanwhile waits in this window.
        if (this.#windows.get(record) === opened) opened.timer = this.#arm(record)
      }
      return
    }
    // A provider reports a PTY's output in one kind; should it switch, keep the kinds apart.
    if (window.pending.length > 0 && typeof window.pending[0] !== typeof chunk) this.#publishPending(record, window)
    window.pending.push(chunk)
    window.seq = seq
  }

  /** Publish what `record` holds now and close its window (before its exit, or when superseded). */
  flush(record: PtyRecord): void {
    const window = this.#windows.get(record)
    if (window === undefined) return
    this.#windows.delete(record)
    if (window.timer !== undefined) this.#timers.clear(window.timer)
    this.#publishPending(record, window)
  }

  /**
   * Flush every record and stop batching (dispose): output a listener causes meanwhile (a chunk a
   * provider hands over from inside an acknowledgement's resume) and any later chunk go out at once.
   */
  flushAll(): void {
    this.#closed = true
    for (const record of [...this.#windows.keys()]) this.flush(record)
  }

  #arm(record: PtyRecord): PtyTimerHandle {
    return this.#timers.set(() => this.#windowEnded(record), this.#windowMs)
  }

  #windowEnded(record: PtyRecord): void {
    const window = this.#windows.get(record)
    if (window === undefined) return
    window.timer = undefined
    if (window.pending.length === 0) {
      this.#windows.delete(record)
      return
    }
    window.timer = this.#arm(record)
    this.#publishPending(record, window)
  }

  #publishPending(record: PtyRecord, window: Window): void {
    const pending = window.pending
    if (pending.length === 0) return
    window.pending = []
    this.#publish(record, mergeChunks(pending), window.seq)
  }
}

/** The chunks as one, in order; all of one kind (see `push`). */
function mergeChunks(chunks: readonly OutputChunk[]): OutputChunk {
  if (chunks.length === 1) return chunks[0] as OutputChunk
  if (typeof chunks[0] === 'string') return (chunks as readonly string[]).join('')
  return Buffer.concat(chunks as readonly Uint8Array[])
}
