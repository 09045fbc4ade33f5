import { closeSync, constants as fsConstants, openSync, writeSync } from 'node:fs'
import type { NodePtyTerminal } from './node-pty-module.js'
import { createMarkerScanner, mintMarker, type MarkerScanner } from './drain-marker.js'
import { readOutMaster, streamDeliverer, type MasterStream } from './master-read-out.js'

/**
 * Retry interval when the marker does not fit yet (`EAGAIN`: the kernel's buffer toward the master
 * is full). The reader empties ~4 KB per event-loop turn, so room appears within a turn or two.
 */
export const NODE_PTY_DRAIN_RETRY_INTERVAL_MS = 2

/**
 * How long the drain waits for its marker (counting only time the producer is not paused) before
 * it gives up and lets the master hang up anyway. The marker normally returns in well under 1 ms;
 * only a terminal whose output was stopped (Ctrl-S with `IXON`) keeps it out, and then no output
 * can arrive either.
 */
export const NODE_PTY_DRAIN_GIVE_UP_MS = 1_000

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
 * - `read-out`: the master was read dry right away (Linux; see {@link ExitDrain});
 * - `end-of-file`: libuv ended the master's stream early, and the drain read the master to its
 *   true end (`EIO`) first (Linux);
 * - `marker`: the marker came back through the PTY;
 * - `give-up`: neither; the drain gave up waiting (the tail may be incomplete).
 */
export type ExitDrainProof = 'read-out' | 'end-of-file' | 'marker' | 'give-up'

/** The private parts of node-pty's `UnixTerminal` the drain uses, read defensively. */
type UnixTerminalInternals = {
  ptsName?: unknown
  _fd?: unknown
  _socket?: {
    destroy?: (...args: unknown[]) => unknown
    on?: (event: string, listener: (...args: unknown[]) => void) => unknown
    once?: (event: string, listener: (...args: unknown[]) => void) => unknown
    push?: (chunk: unknown, encoding?: unknown) => boolean
    readableEnded?: unknown
  } & MasterStream
}

/** A chunk of output as the provider reads it: text (the default) or bytes (`output: 'bytes'`). */
export type DrainChunk = string | Buffer

/** Callbacks of an {@link ExitDrain}. */
export type ExitDrainHooks<C extends DrainChunk = string> = {
  /** Deliver output, in order. */
  emit(data: C): void
  /**
   * node-pty's native layer has seen the child exit (its `waitpid` returned). The drain reports it
   * as a hint; the owner confirms the death and calls {@link ExitDrain.noteChildGone}.
   */
  onNativeExitHint(): void
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
 * **The mechanism on Linux: catch the early end of file.** libuv's shortcut can only fire once every
 * slave fd is closed (that is what POLLHUP on a master means), and then Linux still hands out every
 * byte the slave side wrote before it answers `EIO` (`n_tty_read` first waits for the input still
 * moving toward the master, `tty_buffer_flush_work`). So the drain lets node's stream read as
 * usual and wraps the stream's `push`: when libuv reports its early end (`push(null)`, the master
 * fd still open), the drain first reads the master itself, synchronously, until `EIO`, and pushes
 * what it read into the stream ahead of the end — through the stream's own decoder and buffer, so
 * order, a character split across reads and a consumer's pause all hold. An end that libuv reached
 * through `EIO` had read everything already. Nothing is opened or written per PTY.
 *
 * Once the child is proven gone (node-pty's native exit, a thorough look) and the consumer has not
 * paused, the drain also reads the master dry itself (`read-out`): `EAGAIN` proves every byte the
 * dead child wrote has been read (a surviving process keeps the tty; its output keeps flowing
 * through libuv as before); `EIO` means nothing can arrive any more, so the master's stream is
 * destroyed at once and node-pty reports the exit in this same turn of the event loop. The window
 * relied on: between the drain's reads nothing else reads the master (they run in one synchronous
 * call, after node's stream had delivered everything it had read), so the chunks go out in order,
 * decoded by the stream's own `StringDecoder`. A paused consumer's read-out waits for its resume.
 *
 * **Elsewhere (or with the read-out off): hold the slave side.** Right after the spawn the drain
 * opens the PTY's slave side itself, so the master never hangs up while the child runs or dies.
 * Once the child is proven gone it writes a random marker into the held slave fd: the PTY is a
 * FIFO, so when the marker comes out of the master, every byte the child wrote has been read. The
 * marker is cut from the stream, the slave fd is closed, the master reads its (now empty) end, and
 * node-pty reports the exit.
 *
 * While the end is not proven, node-pty's own 200 ms "destroy the socket after exit" timer is
 * held off, so a paused consumer or a busy event loop cannot make it cut the tail either.
 */
export class ExitDrain<C extends DrainChunk = string> {
  readonly #hooks: ExitDrainHooks<C>
  readonly #bytes: boolean
  // Why lazy: most of a PTY's life is spent watching; the marker and its scanner are only needed
  // once the child is gone, so an idle PTY does not carry them.
  #marker: string | null = null
  #scanner: MarkerScanner<C> | null = null
  #state: ExitDrainState
  #slaveFd: number | null = null
  #markerOffset = 0
  #paused = false
  #retryTimer: NodeJS.Timeout | null = null
  #giveUpTimer: NodeJS.Timeout | null = null
  #deferredDestroy: (() => void) | null = null
  #proof: ExitDrainProof | null = null
  /** Whether the tail may be read out directly (see the class comment). */
  readonly #readOut: boolean
  /** The master's stream and its own (unwrapped) destroy; `null` when node-pty's shape is unknown. */
  #socket: NonNullable<UnixTerminalInternals['_socket']> | null = null
  #destroySocket: ((...args: unknown[]) => unknown) | null = null
  #masterFd: number | null = null
  /** Linux: the end of the output is proven from the master alone (no slave side is held). */
  #slaveLess = false
  /** The stream's end is queued behind output the drain pushed into it (see the class comment). */
  #endQueued = false

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
    this.#readOut = readOut
    this.#state = 'unprotected'
    if (!protect) return
    const internals = terminal as unknown as UnixTerminalInternals
    const socket = internals._socket
    if (readOut && typeof internals._fd === 'number' && socket !== undefined && socket !== null && typeof socket.push === 'function') {
      // Linux: nothing to open (class comment); only the master and its stream are watched.
      this.#slaveLess = true
      this.#masterFd = internals._fd
      this.#state = 'watching'
      this.#hookSocket(socket)
      this.#hookEndOfFile(socket, socket.push)
      return
    }
    const ptsName = internals.ptsName
    if (typeof ptsName !== 'string' || ptsName.length === 0) return
    try {
      // O_NOCTTY: never become the host's controlling terminal. O_NONBLOCK: a full buffer must not
      // block the event loop when the marker is written.
      this.#slaveFd = openSync(ptsName, fsConstants.O_RDWR | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK)
    } catch {
      return
    }
    this.#state = 'watching'
    if (typeof internals._fd === 'number') this.#masterFd = internals._fd
    this.#hookSocket(socket)
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

  #scannerOf(): MarkerScanner<C> {
    this.#scanner ??= createMarkerScanner<C>(this.marker, this.#bytes)
    return this.#scanner
  }

  /** Feed a chunk node-pty delivered. */
  handleData(chunk: C): void {
    // Why 'released' still scans: after a give-up, a marker already written may yet come out.
    const scanning = (this.#state === 'marking' || this.#state === 'released') && this.#markerOffset > 0
    if (!scanning || this.#scanner === null || this.#scanner.spent) {
      this.#hooks.emit(chunk)
      // The reader made room: a marker that did not fit yet may fit now (or the stream that held
      // data back has let it out, and the read-out can follow it).
      if (this.#state === 'marking') this.#proveEnd()
      return
    }
    const scan = this.#scanner.push(chunk)
    if (scan.before.length > 0) this.#hooks.emit(scan.before)
    if (scan.found) {
      if (this.#state === 'marking') {
        this.#proof = 'marker'
        this.#release()
      }
      // Why: text after the marker was written later, by a process that outlived the leader.
      if (scan.after.length > 0) this.#hooks.emit(scan.after)
      return
    }
    // The reader made room: a marker that did not fit may fit now.
    this.#writeMarker()
  }

  /**
   * The child is proven gone: read the tail out; if that cannot finish now, wait for the consumer's
   * resume or the stream (Linux) or send the marker (a held slave side). Idempotent.
   */
  noteChildGone(): void {
    if (this.#state !== 'watching') return
    this.#state = 'marking'
    // Why re-check the state: output delivered by the read-out may have made its owner finish.
    if (this.#readOutTail() || this.#state !== 'marking') return
    if (!this.#slaveLess) this.#scannerOf()
    this.#armGiveUp()
    // A held slave side: send the marker. On Linux the read-out just failed: a resume or the
    // stream's next chunk retries it (#proveEnd).
    this.#writeMarker()
  }

  /** The consumer paused the producer: the read-out or marker retries and the give-up clock stop. */
  notePaused(): void {
    this.#paused = true
    this.#clearTimer('retry')
    this.#clearTimer('giveUp')
  }

  /** The consumer resumed the producer. */
  noteResumed(): void {
    this.#paused = false
    if (this.#state === 'marking') {
      this.#armGiveUp()
      this.#proveEnd()
    }
  }

  /**
   * Try again to prove the end: the read-out (Linux: it waits for a resumed, flowing stream), or
   * (the rest of) the marker. Until it succeeds, the give-up clock runs.
   */
  #proveEnd(): void {
    if (this.#slaveLess) this.#readOutTail()
    else this.#writeMarker()
  }

  /**
   * node-pty reported the exit: release anything held back and every resource. Returns the output
   * still held (deliver it before the exit; empty when none is). Idempotent.
   */
  finish(): C {
    const held = this.#scanner === null || this.#scanner.spent ? ((this.#bytes ? Buffer.alloc(0) : '') as C) : this.#scanner.flush()
    if (this.#state === 'watching' || this.#state === 'marking') this.#release()
    this.#clearTimer('retry')
    this.#clearTimer('giveUp')
    return held
  }

  /** Watch node-pty's socket for its native exit and hold off its early destroy. */
  #hookSocket(socket: UnixTerminalInternals['_socket']): void {
    if (socket === undefined || socket === null || typeof socket.destroy !== 'function') return
    const originalDestroy = socket.destroy
    this.#socket = socket
    this.#destroySocket = originalDestroy
    // Why: node-pty's exit callback (run when its waitpid thread sees the child die) subscribes
    // to the socket's 'close'. Nothing else does after construction, so it is the earliest and
    // cheapest news of the death. It is only a hint: the owner confirms it from the OS.
    socket.on?.('newListener', (event: unknown) => {
      if (event === 'close') this.#hooks.onNativeExitHint()
    })
    // Why: node-pty destroys the socket 200 ms after the native exit even if unread output is
    // still queued (a paused consumer, a blocked event loop). Hold that destroy until the
    // end of the output is proven; then let it through.
    socket.destroy = (...args: unknown[]) => {
      if (this.#slaveLess && args[0] instanceof Error && (this.#state === 'watching' || this.#state === 'marking')) {
        // Node's stream ends itself on a read error. With no slave fd held, `EIO` is the master's
        // true end (Linux flushed every byte to it first): nothing is left to wait for, and no
        // look at the OS is needed. Any other error leaves nothing to read either.
        this.#proof = (args[0] as { code?: unknown }).code === 'EIO' ? 'end-of-file' : 'give-up'
        this.#release()
        return originalDestroy.apply(socket, args)
      }
      if (this.#state === 'watching' || this.#state === 'marking') {
        this.#deferredDestroy = () => originalDestroy.apply(socket, args)
        this.#hooks.onNativeExitHint()
        return socket
      }
      if (this.#endQueued && socket.readableEnded !== true && args.length === 0) {
        // Output pushed ahead of the end still waits in the stream (a paused consumer): it ends
        // (and then closes) on its own once that output is read.
        return socket
      }
      return originalDestroy.apply(socket, args)
    }
  }

  /**
   * Linux: catch libuv's early end of file (class comment). `push(null)` is how node's stream hears
   * it, with the master fd still open: read the master to its true end first and queue what was
   * read in the stream ahead of the end.
   */
  #hookEndOfFile(socket: NonNullable<UnixTerminalInternals['_socket']>, push: NonNullable<NonNullable<UnixTerminalInternals['_socket']>['push']>): void {
    socket.push = (chunk: unknown, encoding?: unknown): boolean => {
      if (chunk === null && this.#masterFd !== null && (this.#state === 'watching' || this.#state === 'marking')) {
        // Copied: the read-out's buffer is shared. Not paused by the consumer's pause: the stream
        // buffers what the consumer does not take yet, and no slave fd is left to write more.
        // Released first: the chunks pushed below reach the drain's own `handleData`, which must
        // not start a read-out of its own meanwhile.
        this.#endQueued = true
        this.#release()
        const end = readOutMaster(this.#masterFd, (bytes) => push.call(socket, Buffer.from(bytes)), () => true)
        this.#proof = end === 'hung-up' ? 'end-of-file' : 'give-up'
      }
      return push.call(socket, chunk, encoding)
    }
  }

  /**
   * The read-out (class comment): `true` when it proved the end of the child's output and released
   * the drain; `false` when it does not apply or was cut short (a pause, a stream holding data back,
   * or more output than a dead writer can have left: a surviving process keeps writing) — then a
   * resume or the stream's next chunk retries it (Linux), or the marker takes over (a held slave).
   */
  #readOutTail(): boolean {
    const socket = this.#socket
    const fd = this.#masterFd
    const destroySocket = this.#destroySocket
    if (!this.#readOut || this.#paused || socket === null || fd === null || destroySocket === null) return false
    // Each chunk is copied or decoded before it is emitted: the listeners may start another
    // drain's read-out, which reads into the same scratch buffer.
    const deliver = streamDeliverer<C>(socket, this.#bytes, this.#hooks)
    // Held back data (a stream just resumed) comes out first; the next chunk tries again.
    if (deliver === null) return false
    const unpaused = (): boolean => !this.#paused && this.#state === 'marking'
    // Linux never held a slave side: `EIO` here is the master's true end (the kernel flushed it
    // first), so nothing is left for anyone. With a slave held, only `EAGAIN` can end it.
    const end = readOutMaster(fd, deliver, unpaused)
    if (this.#state !== 'marking') return false
    // `stopped` unpaused: the byte budget, spent after the death — more than the kernel can have
    // held for the dead child (master-read-out.ts), so all of its output is out; a survivor floods
    // the tty.
    if (this.#slaveLess && (end === 'hung-up' || (end === 'stopped' && !this.#paused))) {
      this.#proof = 'read-out'
      this.#release()
      if (end === 'hung-up' && socket.destroyed !== true) destroySocket.call(socket)
      return true
    }
    if (end !== 'drained') return false
    this.#proof = 'read-out'
    this.#release()
    if (socket.destroyed === true) return true
    // What a surviving process wrote since, if anything; `EIO` is the master's end.
    if (readOutMaster(fd, deliver, () => !this.#paused) === 'hung-up') destroySocket.call(socket)
    return true
  }

  /** Write (the rest of) the marker into the slave side; retry later when it does not fit. */
  #writeMarker(): void {
    const marker = this.marker
    if (this.#state !== 'marking' || this.#slaveFd === null || this.#markerOffset >= marker.length) return
    try {
      this.#markerOffset += writeSync(this.#slaveFd, this.#markerOffset === 0 ? marker : marker.slice(this.#markerOffset))
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EAGAIN') {
        // The slave side is unusable (hung up): nothing more can arrive through it either.
        this.#proof = 'give-up'
        this.#release()
        return
      }
    }
    if (this.#markerOffset < marker.length && !this.#paused && this.#retryTimer === null) {
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = null
        this.#writeMarker()
      }, NODE_PTY_DRAIN_RETRY_INTERVAL_MS)
    }
  }

  #armGiveUp(): void {
    this.#clearTimer('giveUp')
    if (this.#paused) return
    this.#giveUpTimer = setTimeout(() => {
      this.#giveUpTimer = null
      if (this.#state !== 'marking') return
      this.#proof = 'give-up'
      this.#release()
    }, NODE_PTY_DRAIN_GIVE_UP_MS)
  }

  #clearTimer(which: 'retry' | 'giveUp'): void {
    const timer = which === 'retry' ? this.#retryTimer : this.#giveUpTimer
    if (timer !== null) clearTimeout(timer)
    if (which === 'retry') this.#retryTimer = null
    else this.#giveUpTimer = null
  }

  /** Close the held slave side so the master reaches its end; let a held-off destroy through. */
  #release(): void {
    this.#state = 'released'
    this.#clearTimer('retry')
    this.#clearTimer('giveUp')
    if (this.#slaveFd !== null) {
      // Why synchronous: the master's end of file follows this close, and the exit follows that;
      // closing through the thread pool was measured to delay the exit by a further ~0.05 ms.
      try {
        closeSync(this.#slaveFd)
      } catch {
        // Already closed: nothing to release.
      }
      this.#slaveFd = null
    }
    const destroy = this.#deferredDestroy
    this.#deferredDestroy = null
    if (destroy === null) return
    // node-pty's own destroy (its timer after the exit) must not drop output queued ahead of the
    // end: the stream closes on its own after it, which is what node-pty waits for.
    if (this.#endQueued && this.#socket !== null && this.#socket.readableEnded !== true) return
    destroy()
  }
}
