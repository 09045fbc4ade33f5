import type { ExecutionHostId, PtyIncarnationId, PtyLivenessVerdict } from '../contracts/index.js'
import type { TerminalExitCause } from '../exit-cause/index.js'
import type { PtyControllerError } from './pty-controller-error.js'

/** Emitted once a spawn (or attach) is published, before any of its `data` or its `exit`. */
export type PtyControllerSpawnEvent = {
  /** The PTY id. */
  ptyId: string
  /** The incarnation behind the id, when the provider attested one. */
  incarnationId?: PtyIncarnationId
  /** The host it runs on. */
  hostId: ExecutionHostId
  /** The root process id, only when the provider published a proven one. */
  pid?: number
  /** True when the spawn attached to an existing process. */
  isReattach: boolean
  /** The PTY's columns, as applied at spawn (what a terminal view is created with). */
  cols: number
  /** The PTY's rows, as applied at spawn. */
  rows: number
}

/** Output of a PTY. Every `data` event of a PTY precedes its `exit` event; none follows it. */
export type PtyControllerDataEvent = {
  /** The PTY id. */
  ptyId: string
  /** The incarnation that produced it, when attested. */
  incarnationId?: PtyIncarnationId
  /** The host the PTY runs on, as its `spawn` event said: a listener over several hosts needs no id-to-host map. */
  hostId: ExecutionHostId
  /** The output. */
  data: string
  /**
   * The PTY's output sequence after this chunk: the cumulative count of raw chars admitted (from
   * the runtime's `notePtyOutput` when it has one). Use it to align snapshots and acks.
   */
  seq: number
}

/**
 * Output of a PTY whose provider delivers bytes (the node-pty provider with `output: 'bytes'`):
 * the bytes as read from the PTY, undecoded — a multi-byte UTF-8 sequence may be split across two
 * events. Such a PTY's output comes only as `bytes`, never as `data`; the ordering rules are the
 * same (every `bytes` event of a PTY precedes its `exit`), and `seq` and `acknowledgeData` count
 * bytes.
 */
export type PtyControllerBytesEvent = {
  /** The PTY id. */
  ptyId: string
  /** The incarnation that produced it, when attested. */
  incarnationId?: PtyIncarnationId
  /** The host the PTY runs on, as its `spawn` event said: a listener over several hosts needs no id-to-host map. */
  hostId: ExecutionHostId
  /** The output bytes. */
  bytes: Uint8Array
  /** The PTY's output sequence after this chunk, in bytes (see {@link PtyControllerDataEvent.seq}). */
  seq: number
}

/**
 * Output of a PTY went by undelivered — its provider reported a gap (such as a pty host whose ring
 * no longer held what a dropped connection missed), the controller's in-flight buffer dropped it
 * past its cap (reported by the spawn that publishes the PTY, where it stood), or it was printed
 * while the PTY's stop stood unverified and reached nobody (reported right after the `spawn` event
 * of the re-attach that revives it): the PTY's output sequence jumped from `fromSeq` to `toSeq`,
 * and the next `data` (or `bytes`) event continues after `toSeq`. A view that follows the stream by `seq` repaints from a
 * snapshot rather than go on as if nothing was missed.
 */
export type PtyControllerOutputLossEvent = {
  /** The PTY id. */
  ptyId: string
  /** The incarnation whose output was lost, when attested. */
  incarnationId?: PtyIncarnationId
  /** The host the PTY runs on, as its `spawn` event said: a listener over several hosts needs no id-to-host map. */
  hostId: ExecutionHostId
  /** The output sequence before the gap (the `seq` of the last output delivered). */
  fromSeq: number
  /** The output sequence after the gap: `toSeq − fromSeq` chars (bytes) were lost. */
  toSeq: number
}

/**
 * A PTY's process ended (or a stop of it was never confirmed). At most one per incarnation — except
 * that a re-attach to an incarnation whose stop went unverified revives it, and its real exit is
 * then published as well.
 */
export type PtyControllerExitEvent = {
  /** The PTY id. */
  ptyId: string
  /** The incarnation that ended, when attested; never a later one that reused the id. */
  incarnationId?: PtyIncarnationId
  /**
   * The host the ended incarnation ran on, as its `spawn` event said — never that of a later one
   * that reused the id on another host. Once it ended, `listProcessesWithHostScope` no longer
   * lists it, so this is where a host with several execution hosts learns where it ran.
   */
  hostId: ExecutionHostId
  /**
   * The code the provider forwarded; `UNVERIFIED_PROCESS_EXIT_CODE` (−1) when the controller gave
   * up waiting for a stop's confirmation, or the provider's code was not an integer (`NaN`, `1.5`:
   * no status, which the seed never reads as `0`); `0` when a stop was verified by the host's
   * listing without the provider ever reporting an exit.
   */
  code: number
  /** The cause, settled by the operator-close rule (`settleExitCause`). */
  cause: TerminalExitCause
}

/** What the controller now knows about whether a PTY's process is alive. */
export type PtyControllerLivenessEvent = {
  /** The PTY id. */
  ptyId: string
  /** The incarnation the verdict is about, when attested. */
  incarnationId?: PtyIncarnationId
  /** The host of the incarnation the verdict is about, as its `spawn` event said. */
  hostId: ExecutionHostId
  /** The verdict; `unverifiable` is never "dead". */
  verdict: PtyLivenessVerdict
}

/** Payload of the `inputModesReset` event: the sequences that restore the view's default input modes. */
export type PtyControllerInputModesResetEvent = {
  /** The PTY id. */
  ptyId: string
  /** The live incarnation, when attested. */
  incarnationId?: PtyIncarnationId
  /** The host the PTY runs on, as its `spawn` event said: a listener over several hosts needs no id-to-host map. */
  hostId: ExecutionHostId
  /** The reset sequences (`INPUT_MODE_RESET_SEQUENCE`) to write into the view. */
  data: string
}

/**
 * The controller's events (a `typed-emitter` map over `node:events`).
 *
 * Listeners are isolated: one that throws, or returns a promise that rejects (an `async` listener),
 * is reported on `error` (code `listener_threw`) and the remaining listeners still run; nothing ever throws back into a provider's callback. With no
 * `error` listener, faults are dropped silently — the controller never crashes the process over
 * them (unlike a bare `EventEmitter`, which throws an unhandled `'error'`).
 */
export type PtyControllerEvents = {
  /** A PTY was spawned or attached. */
  spawn: (event: PtyControllerSpawnEvent) => void
  /** A PTY produced output. */
  data: (event: PtyControllerDataEvent) => void
  /** A bytes-mode PTY produced output (see {@link PtyControllerBytesEvent}). */
  bytes: (event: PtyControllerBytesEvent) => void
  /** Output of a PTY went by undelivered; its output sequence jumped past the gap. */
  outputLoss: (event: PtyControllerOutputLossEvent) => void
  /** A PTY's process ended, or its stop was given up on (`unknown/stop_unverified`). */
  exit: (event: PtyControllerExitEvent) => void
  /** The liveness verdict of a PTY changed. */
  liveness: (event: PtyControllerLivenessEvent) => void
  /** `resetInputModes` was called: write `data` into the PTY's view (it is not output, and takes no `seq`). */
  inputModesReset: (event: PtyControllerInputModesResetEvent) => void
  /** A fault the controller survived (a listener or provider threw, a stop failed…). */
  error: (error: PtyControllerError) => void
}
