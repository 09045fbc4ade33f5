import { constants as fsConstants, openSync } from 'node:fs'
import { StringDecoder } from 'node:string_decoder'
import type { NodePtyTerminal } from './node-pty-module.js'
import type { DrainChunk, DrainEndProof, DrainLink, DrainMasterSocket, ExitDrainProof, ExitDrainState } from './drain-end-proof.js'
import { mintMarker } from './drain-marker.js'
import { MarkerProof } from './drain-marker-proof.js'
import { MasterReadOut, ReadOutProof } from './drain-read-out.js'
import { readOutMaster } from './master-read-out.js'

/**
 * While a PTY's stream has ended but its leader lives (it let go of the terminal), how often the
 * drain reads the master itself: a process of the session may open the terminal again
 * (`/dev/tty`) and write, and libuv no longer reads it.
 */
export const NODE_PTY_LATE_OUTPUT_POLL_MS = 100

/**
 * The longest wait between two such reads: each read that finds nothing doubles the wait, up to
 * this, and one that finds output reads again within 1 ms (a writer blocked on the terminal's
 * buffer flows) — so 300 such PTYs idle cost a few ms of CPU per second, and a prompt written to
 * `/dev/tty` shows within 0.8 s.
 */
export const NODE_PTY_LATE_OUTPUT_POLL_MAX_MS = 800

export type { DrainChunk, ExitDrainProof, ExitDrainState } from './drain-end-proof.js'

/**
 * How long the drain waits for its marker (counting only time the producer is not paused) before
 * it gives up and lets the master hang up anyway. The marker normally returns in well under 1 ms;
 * only a terminal whose output was stopped (Ctrl-S with `IXON`) keeps it out, and then no output
 * can arrive either.
 */
export const NODE_PTY_DRAIN_GIVE_UP_MS = 1_000

/** The private parts of node-pty's `UnixTerminal` the drain uses, read defensively. */
type UnixTerminalInternals = {
  ptsName?: unknown
  _fd?: unknown
  _socket?: DrainMasterSocket
}

/**
 * Where the shared socket hooks of {@link ExitDrain} find the drain of the stream they were
 * called on (a property of node's stream object, as the hooks themselves are).
 */
const DRAIN_OF_SOCKET = Symbol('ptykit.exitDrain')

/** A master stream the drain has hooked. */
type HookedSocket = DrainMasterSocket & { [DRAIN_OF_SOCKET]?: ExitDrain<DrainChunk> }

/** Callbacks of an {@link ExitDrain}. */
export type ExitDrainHooks<C extends DrainChunk = string> = {
  /** Deliver output, in order. */
  emit(data: C): void
  /**
   * A sign the child may be gone: node-pty's native layer has seen it exit (its `waitpid`
   * returned), or the master's stream ended while the child is not proven gone (its last writer
   * let go of the terminal — usually by dying). Only a hint: the owner confirms the death from the
   * OS and calls {@link ExitDrain.noteChildGone}, which may run within this call.
   */
  onDeathHint(): void
}

/**
 * Delivers every byte a PTY's child wrote before node-pty reports its exit — on Node 20 too.
 *
 * **The bug.** The libuv Node 20 bundles (1.46, older than the upstream fixes in libuv PRs 4997
 * and 5165) treats "POLLHUP and a short read" as end of file. A PTY master often returns 4095
 * bytes while more is queued, so when a child writes more than ~4 KB and exits at once, libuv
 * closes the master early and node-pty reports the exit with up to ~9 KB never delivered (libuv
 * issue 4992; node-pty issues 72, 85, 726).
 *
 * **Two proofs of the end.** On Linux the drain catches libuv's early end of file and, once the
 * child is proven gone, reads the master dry itself; nothing is opened or written per PTY
 * ({@link ReadOutProof}, `drain-read-out.ts`). Elsewhere (or with the read-out off) it holds the
 * PTY's slave side from the spawn and, once the child is proven gone, sends a marker through it
 * ({@link MarkerProof}, `drain-marker-proof.ts`). This class keeps what both share: the state
 * machine ({@link ExitDrainState}), the proof it reports, pause and resume, the give-up clock and
 * the hold of node-pty's socket destroy.
 *
 * While the end is not proven, node-pty's own 200 ms "destroy the socket after exit" timer is
 * held off, so a paused consumer or a busy event loop cannot make it cut the tail either.
 */
export class ExitDrain<C extends DrainChunk = string> {
  readonly #hooks: ExitDrainHooks<C>
  readonly #bytes: boolean
  // Why lazy: most of a PTY's life is spent watching; the marker and its scanner (`MarkerProof`)
  // are only needed once the child is gone, so an idle PTY does not carry them.
  #marker: string | null = null
  #state: ExitDrainState
  #paused = false
  #giveUpTimer: NodeJS.Timeout | null = null
  /** The arguments of a destroy of node-pty's held off until the end is proven (`null`: none). */
  #deferredDestroyArgs: unknown[] | null = null
  /** The master stream's own `destroy`, which {@link ExitDrain.#hookSocket} replaced; `null` when not hooked. */
  #originalDestroy: ((...args: unknown[]) => unknown) | null = null
  #proof: ExitDrainProof | null = null
  /** How the end is proven: the read-out (Linux) or the marker; `null` while `unprotected`. */
  #endProof: DrainEndProof<C> | null = null
  /** The master's stream; `null` when node-pty's shape is unknown. */
  #socket: DrainMasterSocket | null = null
  /**
   * True once the child is proven gone ({@link ExitDrain.noteChildGone}, or node-pty's exit).
   * Until then the master is never closed, whatever its stream does: a program that let go of the
   * terminal (no fd on it: the master's read answers `EIO`, libuv ends the stream) still runs, and
   * closing the master would hang it up — a death nobody asked for.
   */
  #childGone = false
  /** The master's fd where the drain may read it itself (Linux read-out); `null` otherwise. */
  #masterFd: number | null = null
  /** The poll of the master while its stream has ended and the leader lives; `null` when none. */
  #latePoll: NodeJS.Timeout | null = null
  /** True while the master is watched that way (the timer may be off meanwhile: a consumer's pause). */
  #lateWatching = false
  /** True once the master's close is under way: nothing reads its fd any more (it may name another file). */
  #masterClosing = false
  /** The wait before the next late read (see {@link NODE_PTY_LATE_OUTPUT_POLL_MAX_MS}). */
  #lateDelayMs = NODE_PTY_LATE_OUTPUT_POLL_MS
  /** Decodes what the late poll reads (string mode); made on its first read. */
  #lateDecoder: StringDecoder | null = null

  /**
   * Start watching a freshly spawned terminal. Call it synchronously after `spawn()`, before the
   * event loop turns, so no read of the master happens before the drain's hooks are installed (or
   * the slave side is held).
   *
   * @param terminal - the node-pty terminal
   * @param hooks - where output and exit hints go
   * @param protect - `false` leaves node-pty's behaviour alone (`unprotected`)
   * @param bytes - `true` when the chunks are `Buffer`s (the provider's bytes mode):
   * the marker is then found and cut in bytes, so no byte is decoded or changed
   * @param readOut - prove the end by reading the master dry where the kernel makes that a proof
   * (default: on Linux); `false` always uses the marker
   */
  constructor(terminal: NodePtyTerminal, hooks: ExitDrainHooks<C>, protect: boolean, bytes = false, readOut = process.platform === 'linux') {
    this.#hooks = hooks
    this.#bytes = bytes
    this.#state = 'unprotected'
    if (!protect) return
    const internals = terminal as unknown as UnixTerminalInternals
    const socket = internals._socket
    if (readOut && typeof internals._fd === 'number' && socket !== undefined && socket !== null && typeof socket.push === 'function') {
      // Linux: nothing to open (`drain-read-out.ts`); only the master and its stream are watched.
      this.#state = 'watching'
      const destroySocket = this.#hookSocket(socket)
      this.#masterFd = internals._fd
      this.#endProof = new ReadOutProof<C>(new ExitDrain.#Link(this), internals._fd, socket, socket.push, destroySocket)
      return
    }
    const ptsName = internals.ptsName
    if (typeof ptsName !== 'string' || ptsName.length === 0) return
    let slaveFd: number
    try {
      // O_NOCTTY: never become the host's controlling terminal. O_NONBLOCK: a full buffer must not
      // block the event loop when the marker is written.
      slaveFd = openSync(ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK)
    } catch {
      return
    }
    this.#state = 'watching'
    const masterFd = typeof internals._fd === 'number' ? internals._fd : null
    const destroySocket = this.#hookSocket(socket)
    const link = new ExitDrain.#Link(this)
    // The read-out is tried first at the death where it may apply (`drain-read-out.ts`).
    const readOutFirst =
      readOut && masterFd !== null && socket !== undefined && socket !== null && destroySocket !== null
        ? new MasterReadOut<C>(link, masterFd, socket, destroySocket)
        : null
    this.#endProof = new MarkerProof<C>(link, slaveFd, readOutFirst)
  }

  /** The drain's state. */
  get state(): ExitDrainState {
    return this.#state
  }

  /** True when the drain gave up waiting for its proof (the tail may then be incomplete). */
  get gaveUp(): boolean {
    return this.#proof === 'give-up'
  }

  /** How the end of the output was proven (`null` while it is not, or when node-pty's exit came first). */
  get proof(): ExitDrainProof | null {
    return this.#proof
  }

  /** The marker of this drain (for tests and diagnostics). */
  get marker(): string {
    this.#marker ??= mintMarker()
    return this.#marker
  }

  /** Feed a chunk node-pty delivered. */
  handleData(chunk: C): void {
    // Why 'released' still scans: after a give-up, a marker already written may yet come out.
    if ((this.#state === 'marking' || this.#state === 'released') && this.#endProof !== null && this.#endProof.take(chunk)) return
    this.#hooks.emit(chunk)
    // The reader made room: a marker that did not fit yet may fit now (or the stream that held
    // data back has let it out, and the read-out can follow it).
    if (this.#state === 'marking') this.#endProof?.retry()
  }

  /**
   * The child is proven gone: read the tail out; if that cannot finish now, wait for the consumer's
   * resume or the stream (Linux) or send the marker (a held slave side). Idempotent.
   */
  noteChildGone(): void {
    this.#childGone = true
    // The output's end was proven while the child lived (it let go of the terminal): the master,
    // kept open for it, may close now.
    if (this.#state === 'released') this.#destroyDeferred()
    const endProof = this.#endProof
    if (this.#state !== 'watching' || endProof === null) return
    this.#state = 'marking'
    // Why re-check the state: output delivered by the read-out may have made its owner finish.
    if (endProof.proveAtDeath() || this.#state !== 'marking') return
    this.#armGiveUp()
    // A held slave side: send the marker. On Linux the read-out just failed: a resume or the
    // stream's next chunk retries it (`retry`).
    endProof.awaitProof()
  }

  /** The consumer paused the producer: the read-out or marker retries and the give-up clock stop. */
  notePaused(): void {
    this.#paused = true
    this.#endProof?.stopRetrying()
    this.#clearGiveUp()
  }

  /** The consumer resumed the producer. */
  noteResumed(): void {
    this.#paused = false
    // The late read, held while paused, goes on at once.
    if (this.#lateWatching && this.#latePoll === null) {
      this.#lateDelayMs = 1
      this.#armLatePoll()
    }
    if (this.#state === 'marking') {
      this.#armGiveUp()
      this.#endProof?.retry()
    }
  }

  /**
   * node-pty reported the exit: release anything held back and every resource. Returns the output
   * still held (deliver it before the exit; empty when none is). Idempotent.
   */
  finish(): C {
    // node-pty reports the exit once its waitpid returned: the child is gone.
    this.#childGone = true
    this.#stopLatePoll()
    const held = this.#endProof?.flush() ?? ((this.#bytes ? Buffer.alloc(0) : '') as C)
    if (this.#state === 'watching' || this.#state === 'marking') this.#release()
    this.#endProof?.stopRetrying()
    this.#clearGiveUp()
    return held
  }

  /**
   * Watch node-pty's socket for its native exit and hold off its early destroy. Returns the
   * socket's own destroy (`null` when there is none to hold).
   *
   * Shared, not a closure per PTY: the listener and the destroy installed here are the same two
   * functions for every socket, and find their drain through the socket ({@link DRAIN_OF_SOCKET});
   * the socket's own destroy is kept on the drain. Every PTY used to carry two closures and their
   * context for this, allocated between two forks on every spawn (docs/performance.md).
   */
  #hookSocket(socket: DrainMasterSocket | undefined): ((...args: unknown[]) => unknown) | null {
    if (socket === undefined || socket === null || typeof socket.destroy !== 'function') return null
    const originalDestroy = socket.destroy
    this.#socket = socket
    this.#originalDestroy = originalDestroy
    ;(socket as HookedSocket)[DRAIN_OF_SOCKET] = this as ExitDrain<DrainChunk>
    // Why: node-pty's exit callback (run when its waitpid thread sees the child die) subscribes
    // to the socket's 'close'. Nothing else does after construction, so it is news of the death
    // that costs nothing (the stream's end, `#startLatePoll`, usually comes first). It is only a
    // hint: the owner confirms it from the OS.
    socket.on?.('newListener', ExitDrain.#onSocketNewListener)
    // Why: node-pty destroys the socket 200 ms after the native exit even if unread output is
    // still queued (a paused consumer, a blocked event loop). Hold that destroy until the
    // end of the output is proven; then let it through.
    socket.destroy = ExitDrain.#destroySocketWhenProven
    return originalDestroy
  }

  /** The socket's `newListener` listener (`this` is the socket, as an EventEmitter calls it). */
  static readonly #onSocketNewListener = function onSocketNewListener(this: HookedSocket, event: unknown): void {
    const drain = this[DRAIN_OF_SOCKET]
    if (event === 'close' && drain !== undefined) drain.#hooks.onDeathHint()
  }

  /** The socket's `destroy` while its drain lives (`this` is the socket: streams call it as a method). */
  static readonly #destroySocketWhenProven = function destroySocketWhenProven(this: HookedSocket, ...args: unknown[]): unknown {
    return (this[DRAIN_OF_SOCKET] as ExitDrain<DrainChunk>).#destroyWhenProven(args)
  }

  /** node-pty (or the stream itself, on a read error) destroys the master's stream with `args`. */
  #destroyWhenProven(args: unknown[]): unknown {
    const socket = this.#socket as DrainMasterSocket
    const originalDestroy = this.#originalDestroy as (...args: unknown[]) => unknown
    if (args[0] instanceof Error && (this.#state === 'watching' || this.#state === 'marking')) {
      // A read error may itself be the proven end (`EIO` with no slave fd held, Linux:
      // `ReadOutProof.proofOfStreamError`): then nothing is left to wait for.
      const proof = this.#endProof === null ? null : this.#endProof.proofOfStreamError(args[0])
      if (proof !== null) {
        this.#proof = proof
        // Closed once the child is gone (at once when it is: the usual end), never before.
        this.#holdDestroy(args)
        this.#release()
        return socket
      }
    }
    if (this.#state === 'watching' || this.#state === 'marking') {
      this.#holdDestroy(args)
      this.#hooks.onDeathHint()
      return socket
    }
    if (this.#endProof !== null && this.#endProof.endQueued && socket.readableEnded !== true && args.length === 0) {
      // Output pushed ahead of the end still waits in the stream (a paused consumer): it ends
      // (and then closes) on its own once that output is read.
      return socket
    }
    if (!this.#childGone) {
      // The stream ended while the child lives (it let go of the terminal): keep the master open.
      this.#holdDestroy(args)
      return socket
    }
    return originalDestroy.apply(socket, args)
  }

  /**
   * Hold off a destroy of the master's stream with `args`. The first error held is the one that
   * goes through: a later one — a read restarted (a consumer's resume) on a master that already
   * answered `EIO` fails with `ENOTCONN` — would reach node-pty's `error` listener, which throws
   * any error but `EIO`.
   */
  #holdDestroy(args: unknown[]): void {
    const held = this.#deferredDestroyArgs
    if (held === null || !(held[0] instanceof Error)) this.#deferredDestroyArgs = args
    // Held past the output's proven end (the stream is done): watch the master until the leader goes.
    if (this.#state === 'released') this.#startLatePoll()
  }

  /**
   * The master's stream is done while the child is not proven gone: look once whether it is, else
   * read the master on a timer (see {@link NODE_PTY_LATE_OUTPUT_POLL_MS}), where the drain can.
   */
  #startLatePoll(): void {
    if (this.#lateWatching || this.#masterFd === null || this.#childGone || this.#masterClosing) return
    // Why look now: the stream usually ended because its last writer, the child, died; then the
    // owner's look proves it (`noteChildGone`, within this call) and the master closes in this turn,
    // as node-pty's own stream does, while node-pty's report of the reap is still on its way. Held
    // until that report, the master's close and everything after it ran only once the report came:
    // the exit event 0.5–0.7 ms after it, raw node-pty's 0.03 ms (docs/performance.md, 5 Dec,
    // fourteenth session).
    this.#hooks.onDeathHint()
    if (this.#childGone || this.#masterClosing) return
    this.#lateWatching = true
    this.#armLatePoll()
  }

  #armLatePoll(): void {
    this.#latePoll = setTimeout(ExitDrain.#pollLateOutput, this.#lateDelayMs, this)
    this.#latePoll.unref()
  }

  #stopLatePoll(): void {
    this.#lateWatching = false
    if (this.#latePoll !== null) clearTimeout(this.#latePoll)
    this.#latePoll = null
  }

  static readonly #pollLateOutput = (drain: ExitDrain<DrainChunk>): void => {
    drain.#latePoll = null
    // Paused: not re-armed until the consumer resumes (noteResumed), so no timer spins meanwhile.
    if (!drain.#lateWatching || drain.#paused) return
    const found = drain.#readLateOutput()
    // Output flowing (a writer blocked on the terminal's 4 KiB buffer): read again at once.
    drain.#lateDelayMs = found ? 1 : Math.min(2 * drain.#lateDelayMs, NODE_PTY_LATE_OUTPUT_POLL_MAX_MS)
    // Stopped while reading (a read error, or the delivery led to the leader's end): not re-armed.
    if (drain.#lateWatching && drain.#latePoll === null && !drain.#paused) drain.#armLatePoll()
  }

  /**
   * Read what the master holds now and deliver it, in order after everything the stream delivered:
   * output a process wrote after opening the terminal again. Stops at the consumer's pause.
   */
  #readLateOutput(): boolean {
    const fd = this.#masterFd
    if (fd === null || this.#masterClosing) return false
    let found = false
    const end = readOutMaster(
      fd,
      (bytes) => {
        found = true
        if (this.#bytes) {
          this.#hooks.emit(Buffer.from(bytes) as C)
          return
        }
        const text = (this.#lateDecoder ??= new StringDecoder('utf8')).write(bytes)
        if (text.length > 0) this.#hooks.emit(text as C)
      },
      // A delivery can lead to the leader's end and the master's close (a listener that looks at the
      // process): never read on from an fd that may name another file by then.
      () => !this.#paused && !this.#masterClosing,
    )
    if (end === 'failed') this.#stopLatePoll()
    return found
  }

  #armGiveUp(): void {
    this.#clearGiveUp()
    if (this.#paused) return
    this.#giveUpTimer = setTimeout(() => {
      this.#giveUpTimer = null
      if (this.#state !== 'marking') return
      this.#proof = 'give-up'
      this.#release()
    }, NODE_PTY_DRAIN_GIVE_UP_MS)
  }

  #clearGiveUp(): void {
    if (this.#giveUpTimer !== null) clearTimeout(this.#giveUpTimer)
    this.#giveUpTimer = null
  }

  /** Let the end proof let go of what it holds (a held slave side); let a held-off destroy through. */
  #release(): void {
    this.#state = 'released'
    this.#clearGiveUp()
    this.#endProof?.release()
    this.#destroyDeferred()
    // A destroy still held: the leader lives on past its output's end (see #holdDestroy).
    if (this.#deferredDestroyArgs !== null) this.#startLatePoll()
  }

  /** Let a held-off destroy through, once the child is gone (until then the master stays open). */
  #destroyDeferred(): void {
    const args = this.#deferredDestroyArgs
    if (args === null || !this.#childGone) return
    this.#deferredDestroyArgs = null
    if (this.#lateWatching) {
      // The leader is gone: what its session wrote last is read before the master closes.
      this.#stopLatePoll()
      this.#readLateOutput()
      const tail = this.#lateDecoder?.end() ?? ''
      if (tail.length > 0) this.#hooks.emit(tail as C)
    }
    if (this.#socket === null || this.#originalDestroy === null) return
    this.#masterClosing = true
    // node-pty's own destroy (its timer after the exit) must not drop output queued ahead of the
    // end: the stream closes on its own after it, which is what node-pty waits for.
    if (this.#endProof !== null && this.#endProof.endQueued && this.#socket.readableEnded !== true) return
    this.#originalDestroy.apply(this.#socket, args)
  }

  /**
   * What the end proofs see of a drain and ask of it ({@link DrainLink}). A class reaching into the
   * drain's private state, not an object of closures: one small object per PTY, whose idle memory
   * is budgeted (docs/performance.md).
   */
  static readonly #Link = class Link implements DrainLink<DrainChunk> {
    readonly #drain: ExitDrain<DrainChunk>

    constructor(drain: ExitDrain<DrainChunk>) {
      this.#drain = drain
    }

    get state(): ExitDrainState {
      return this.#drain.#state
    }

    get bytes(): boolean {
      return this.#drain.#bytes
    }

    get paused(): boolean {
      return this.#drain.#paused
    }

    get marker(): string {
      return this.#drain.marker
    }

    emit(chunk: DrainChunk): void {
      this.#drain.#hooks.emit(chunk)
    }

    prove(proof: ExitDrainProof): void {
      this.#drain.#proof = proof
    }

    release(): void {
      this.#drain.#release()
    }
  }
}
