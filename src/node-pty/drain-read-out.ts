/**
 * The exit drain's proof on Linux (see `exit-drain.ts`): the master is read, never the slave side
 * held. {@link ReadOutProof} catches libuv's early end of file and reads the master dry at the
 * child's death; {@link MasterReadOut} is the read-out itself, which the marker proof also tries
 * first while it holds a slave side (`drain-marker-proof.ts`).
 */
import type { DrainChunk, DrainEndProof, DrainLink, DrainMasterSocket, ExitDrainProof } from './drain-end-proof.js'
import { readOutMaster, streamDeliverer, type MasterReadOutEnd, type MasterStream } from './master-read-out.js'

/** Where the shared `push` of {@link ReadOutProof} finds the proof of the stream it was called on. */
const PROOF_OF_STREAM = Symbol('ptykit.readOutProof')

/** A master stream whose `push` a {@link ReadOutProof} watches. */
type ProvenStream = DrainMasterSocket & { [PROOF_OF_STREAM]?: ReadOutProof<DrainChunk> }

/**
 * The read-out of a PTY master at its child's death: read the master dry, synchronously, and hand
 * the chunks on as the master's stream would have (see {@link ReadOutProof}).
 */
export class MasterReadOut<C extends DrainChunk> {
  /** The drain (protected: {@link ReadOutProof}'s shared `push` reaches it through the proof). */
  protected readonly link: DrainLink<C>
  readonly #fd: number
  /** The master's stream (protected, as {@link MasterReadOut.link}). */
  protected readonly socket: MasterStream
  /** The stream's own (unwrapped) destroy; `null` when node-pty's stream has none. */
  readonly #destroySocket: ((...args: unknown[]) => unknown) | null

  /**
   * @param link - the drain this read-out proves the end for (and delivers output through)
   * @param fd - the master's file descriptor
   * @param socket - the master's stream
   * @param destroySocket - the stream's own (unwrapped) destroy, or `null` (then no read-out runs)
   */
  constructor(link: DrainLink<C>, fd: number, socket: MasterStream, destroySocket: ((...args: unknown[]) => unknown) | null) {
    this.link = link
    this.#fd = fd
    this.socket = socket
    this.#destroySocket = destroySocket
  }

  /**
   * The read-out with no slave side held (Linux): `true` when it proved the end of the child's
   * output and released the drain; `false` when it does not apply or was cut short (a pause, a
   * stream holding data back, or more output than a dead writer can have left: a surviving process
   * keeps writing) — then a resume or the stream's next chunk retries it.
   */
  proveWithoutSlave(): boolean {
    const deliver = this.#deliverer()
    if (deliver === null) return false
    // Linux never held a slave side: `EIO` here is the master's true end (the kernel flushed it
    // first), so nothing is left for anyone.
    const end = this.#readDry(deliver)
    if (this.link.state !== 'marking') return false
    // `stopped` unpaused: the byte budget, spent after the death — more than the kernel can have
    // held for the dead child (master-read-out.ts), so all of its output is out; a survivor floods
    // the tty.
    if (end === 'hung-up' || (end === 'stopped' && !this.link.paused)) {
      this.link.prove('read-out')
      this.link.release()
      if (end === 'hung-up' && this.socket.destroyed !== true) this.#destroySocket?.call(this.socket)
      return true
    }
    if (end !== 'drained') return false
    this.#settleDrained(deliver)
    return true
  }

  /**
   * The read-out while a slave side is held (the marker proof's first try): `true` when it proved
   * the end and released the drain; `false` when it does not apply or was cut short — then the
   * marker takes over.
   */
  proveWithSlaveHeld(): boolean {
    const deliver = this.#deliverer()
    if (deliver === null) return false
    // With a slave held, only `EAGAIN` can end it.
    const end = this.#readDry(deliver)
    if (this.link.state !== 'marking') return false
    if (end !== 'drained') return false
    this.#settleDrained(deliver)
    return true
  }

  /** Where the read-out's chunks go, or `null` when no read-out can run now. */
  #deliverer(): ((chunk: Buffer) => void) | null {
    if (this.link.paused || this.#destroySocket === null) return null
    // Each chunk is copied or decoded before it is emitted: the listeners may start another
    // drain's read-out, which reads into the same scratch buffer.
    // Held back data (a stream just resumed) comes out first (`null`); the next chunk tries again.
    return streamDeliverer<C>(this.socket, this.link.bytes, this.link)
  }

  /** Read the master until it has nothing left, the consumer pauses, or the drain stops marking. */
  #readDry(deliver: (chunk: Buffer) => void): MasterReadOutEnd {
    const unpaused = (): boolean => !this.link.paused && this.link.state === 'marking'
    return readOutMaster(this.#fd, deliver, unpaused)
  }

  /**
   * Read the master to its end for the stream itself, paused or not (the catch of libuv's early
   * end of file, {@link ReadOutProof}): each chunk to `deliver`, a view of a shared buffer.
   */
  readToEnd(deliver: (chunk: Buffer) => void): MasterReadOutEnd {
    return readOutMaster(this.#fd, deliver, () => true)
  }

  /** `EAGAIN`: every byte the dead child wrote has been read. Release, then read once more. */
  #settleDrained(deliver: (chunk: Buffer) => void): void {
    this.link.prove('read-out')
    this.link.release()
    if (this.socket.destroyed === true) return
    // What a surviving process wrote since, if anything; `EIO` is the master's end.
    if (readOutMaster(this.#fd, deliver, () => !this.link.paused) === 'hung-up') this.#destroySocket?.call(this.socket)
  }
}

/**
 * The drain's proof on Linux, with no slave side held.
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
 */
export class ReadOutProof<C extends DrainChunk> extends MasterReadOut<C> implements DrainEndProof<C> {
  /** The stream's end is queued behind output the drain pushed into it (see the class comment). */
  #endQueued = false
  /** The stream's own `push` (replaced with {@link ReadOutProof.#pushWatchingEndOfFile}). */
  readonly #push: NonNullable<DrainMasterSocket['push']>

  /**
   * Start watching the master: wraps its stream's `push` (installed at once, before the event loop
   * turns).
   *
   * @param link - the drain this proves the end for
   * @param fd - the master's file descriptor
   * @param socket - the master's stream
   * @param push - the stream's own `push` (wrapped here)
   * @param destroySocket - the stream's own (unwrapped) destroy, or `null` (then no read-out runs)
   */
  constructor(
    link: DrainLink<C>,
    fd: number,
    socket: DrainMasterSocket,
    push: NonNullable<DrainMasterSocket['push']>,
    destroySocket: ((...args: unknown[]) => unknown) | null,
  ) {
    super(link, fd, socket, destroySocket)
    this.#push = push
    // Shared, not a closure per PTY: one function for every stream, which finds its proof through
    // the stream (PROOF_OF_STREAM); a closure and its context per PTY were allocated between two
    // forks on every spawn (docs/performance.md).
    ;(socket as ProvenStream)[PROOF_OF_STREAM] = this as ReadOutProof<DrainChunk>
    socket.push = ReadOutProof.#pushWatchingEndOfFile
  }

  get endQueued(): boolean {
    return this.#endQueued
  }

  proveAtDeath(): boolean {
    return this.proveWithoutSlave()
  }

  awaitProof(): void {
    // Nothing to send: the read-out just failed, and a resume or the stream's next chunk retries
    // it (retry).
  }

  retry(): void {
    this.proveWithoutSlave()
  }

  take(): boolean {
    return false
  }

  flush(): null {
    return null
  }

  stopRetrying(): void {
    // No timer: the read-out is retried by a resume or the stream's next chunk.
  }

  release(): void {
    // Nothing is held: no slave side was opened.
  }

  proofOfStreamError(error: Error): ExitDrainProof {
    // Node's stream ends itself on a read error. With no slave fd held, `EIO` is the master's
    // true end (Linux flushed every byte to it first): nothing is left to wait for, and no
    // look at the OS is needed. Any other error leaves nothing to read either.
    return (error as { code?: unknown }).code === 'EIO' ? 'end-of-file' : 'give-up'
  }

  /** The stream's `push` while this proof watches it (`this` is the stream: node calls it as a method). */
  static readonly #pushWatchingEndOfFile = function pushWatchingEndOfFile(this: ProvenStream, chunk: unknown, encoding?: unknown): boolean {
    return (this[PROOF_OF_STREAM] as ReadOutProof<DrainChunk>).#onPush(chunk, encoding)
  }

  /**
   * Catch libuv's early end of file (class comment). `push(null)` is how node's stream hears it,
   * with the master fd still open: read the master to its true end first and queue what was read
   * in the stream ahead of the end.
   */
  #onPush(chunk: unknown, encoding?: unknown): boolean {
    const link = this.link
    const socket = this.socket
    const push = this.#push
    if (chunk === null && (link.state === 'watching' || link.state === 'marking')) {
      // Copied: the read-out's buffer is shared. Not paused by the consumer's pause: the stream
      // buffers what the consumer does not take yet, and no slave fd is left to write more.
      // Released first: the chunks pushed below reach the drain's own `handleData`, which must
      // not start a read-out of its own meanwhile.
      this.#endQueued = true
      link.release()
      const end = this.readToEnd((bytes) => push.call(socket, Buffer.from(bytes)))
      link.prove(end === 'hung-up' ? 'end-of-file' : 'give-up')
    } else if (chunk === null && link.state === 'released' && !this.#endQueued && socket.destroyed !== true) {
      // The end was proven at the leader's death (`EAGAIN`) while a process of its session kept
      // the terminal (a background job that ignored the hang-up) and wrote on through libuv. Its
      // own end hangs the master up, and libuv's early end of file would drop the tail it wrote
      // (up to ~9 KB): read the master to its true end first, as above. The proof stays.
      this.#endQueued = true
      this.readToEnd((bytes) => push.call(socket, Buffer.from(bytes)))
    }
    return push.call(socket, chunk, encoding)
  }
}
