/**
 * What the exit drain (`exit-drain.ts`) shares with its two ways of proving the end of a dead
 * child's output: the read-out of the master (`drain-read-out.ts`, Linux: no slave side held) and
 * the marker through a held slave side (`drain-marker-proof.ts`, elsewhere). The drain keeps the
 * state machine, the proof it reports and the hold of node-pty's socket destroy; a proof only reads
 * the state and, once the end is proven (or given up on), records how and releases the drain.
 */
import type { MasterStream } from './master-read-out.js'

/**
 * Where a drain is:
 * - `watching`: the child runs; the drain watches the master's end of file (Linux) or holds the
 *   PTY's slave side open (elsewhere);
 * - `marking`: the child is gone; the end of its output is being proven (the read-out, or the
 *   marker on its way through the PTY);
 * - `released`: the end was proven (or the drain gave up); a held slave side is closed, so the
 *   master reads to its end and node-pty reports the exit;
 * - `unprotected`: neither is possible (Windows, node-pty's internals not as expected, or the
 *   open failed); node-pty's own, lossy, behaviour applies.
 */
export type ExitDrainState = 'watching' | 'marking' | 'released' | 'unprotected'

/**
 * How the end of a child's output was proven, once it was:
 * - `read-out`: the master was read dry right away (Linux; see `drain-read-out.ts`);
 * - `end-of-file`: libuv ended the master's stream early, and the drain read the master to its
 *   true end (`EIO`) first (Linux);
 * - `marker`: the marker came back through the PTY;
 * - `give-up`: neither; the drain gave up waiting (the tail may be incomplete).
 */
export type ExitDrainProof = 'read-out' | 'end-of-file' | 'marker' | 'give-up'

/** A chunk of output as the provider reads it: text (the default) or bytes (`output: 'bytes'`). */
export type DrainChunk = string | Buffer

/** The PTY master's stream (node-pty's private `_socket`, a `tty.ReadStream`), read defensively. */
export type DrainMasterSocket = {
  destroy?: (...args: unknown[]) => unknown
  on?: (event: string, listener: (...args: unknown[]) => void) => unknown
  once?: (event: string, listener: (...args: unknown[]) => void) => unknown
  push?: (chunk: unknown, encoding?: unknown) => boolean
  readableEnded?: unknown
} & MasterStream

/** What an end proof sees of its exit drain, and asks of it. */
export interface DrainLink<C extends DrainChunk> {
  /** The drain's state. */
  readonly state: ExitDrainState
  /** `true` when the chunks are `Buffer`s (the provider's bytes mode). */
  readonly bytes: boolean
  /** Whether the consumer has paused the producer. */
  readonly paused: boolean
  /** The drain's marker (minted on first use). */
  readonly marker: string
  /** Deliver output, in order (the drain's hooks). */
  emit(chunk: C): void
  /** Record how the end of the output was proven (what the drain's `proof` reports). */
  prove(proof: ExitDrainProof): void
  /**
   * Release the drain: `released`, its timers stopped, the proof's own hold let go (a held slave
   * side closed), a held-off destroy of node-pty's socket let through.
   */
  release(): void
}

/**
 * One way of proving that every byte a dead child wrote has been delivered. The drain calls it
 * from its state machine; it never changes the drain's state but through {@link DrainLink.release}.
 */
export interface DrainEndProof<C extends DrainChunk> {
  /**
   * Output pushed ahead of the master stream's end still waits in the stream (Linux: the catch of
   * libuv's early end of file): node-pty's destroy must then let the stream end, and close, on its own.
   */
  readonly endQueued: boolean
  /**
   * The child is proven gone (the drain just became `marking`): prove the end at once if that can
   * be done. `true` when it was (the drain is released).
   */
  proveAtDeath(): boolean
  /** The end was not proven at once: start on the proof that takes time (the give-up clock runs). */
  awaitProof(): void
  /**
   * Try again to prove the end: the read-out (Linux: it waits for a resumed, flowing stream), or
   * (the rest of) the marker. Until it succeeds, the give-up clock runs.
   */
  retry(): void
  /**
   * A chunk node-pty delivered while the drain is `marking` or `released`: `true` when the proof
   * took it (and delivered what of it is output), `false` to let the drain deliver it as it is.
   */
  take(chunk: C): boolean
  /** The output the proof still holds back (node-pty reported the exit), or `null` when none. */
  flush(): C | null
  /** The consumer paused the producer, or node-pty reported the exit: stop retrying on a timer. */
  stopRetrying(): void
  /** The drain is released: stop retrying and let go of what the proof holds. */
  release(): void
  /**
   * The master's stream is being destroyed with `error` (node's stream ends itself on a read error)
   * while the drain is live: the proof that is, or `null` when it proves nothing (node-pty's destroy
   * is then held off as any other).
   */
  proofOfStreamError(error: Error): ExitDrainProof | null
}
