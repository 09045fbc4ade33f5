import type { Socket } from 'node:net'
import { FrameBufferPool } from './frame-buffer-pool.js'
import { encodeFrame, encodeOutputFrame, HEADER_BYTES, PTY_HOST_MAX_FRAME_BYTES } from './frame-codec.js'
import type { PtyHostMessage } from './protocol.js'
import { textPieces } from './write-pieces.js'

/**
 * While output streams (the previous flush, less than this long ago, carried at least
 * {@link PTY_HOST_OUTPUT_STREAMING_CHARS}), queued output waits this long before it is sent, so a
 * flood of 4 KiB PTY reads crosses the socket as few large frames (fewer syscalls and wake-ups on
 * both sides). Other output (an echo, a prompt, the first read of a flood) goes out at the end of
 * its event-loop turn and never waits. VS Code's pty host buffers all output for 5 ms.
 */
export const PTY_HOST_OUTPUT_COALESCE_MS = 2

/** A flush at least this large counts as streaming output (a flood's reads are ~4 KiB each). */
export const PTY_HOST_OUTPUT_STREAMING_CHARS = 1024

/** Queued output of one connection past this many chars is sent at once, whatever the timing. */
export const PTY_HOST_OUTPUT_FLUSH_CHARS = 256 * 1024

/**
 * The most chars one output frame carries (a long replay is sent as several): at most 3 bytes per
 * char in UTF-8, so a frame stays far below the peer's `PTY_HOST_MAX_FRAME_BYTES`.
 */
export const PTY_HOST_OUTPUT_FRAME_MAX_CHARS = 1024 * 1024

/**
 * Output queued for one PTY on one connection, sent as one frame at the next flush: its parts
 * (UTF-8 bytes of whole characters as the host read them, or text such as a replay), their total
 * length in chars, and whether a text part ends in the first half of a surrogate pair (then the
 * parts are joined before encoding, so the pair stays whole).
 */
type QueuedOutput = { parts: (string | Uint8Array)[]; chars: number; splitsSurrogatePair: boolean; seq: number; incarnationId: string | undefined }

/** Whether `data` is text that ends in the first half of a surrogate pair (bytes never do: they hold whole characters). */
function endsInHighSurrogate(data: string | Uint8Array): boolean {
  if (typeof data !== 'string') return false
  const code = data.charCodeAt(data.length - 1)
  return code >= 0xd800 && code <= 0xdbff
}

/**
 * One client connection as the host sees it: its socket, whether it said a valid hello, the
 * sessions it follows, and its outgoing output. Output is batched: the chunks a PTY produces
 * within one event-loop turn go out as a single binary frame per PTY, all frames of the turn in
 * one corked write. Any other message flushes the queued output first, so the order of data,
 * replies and exits on the wire is the order in which the host produced them.
 */
export class HostClient {
  /** The client's socket. */
  readonly socket: Socket
  /** Whether the hello (version and secret) was accepted. */
  authenticated = false
  /** The ids of the sessions whose events this client receives. */
  readonly subscriptions = new Set<string>()
  readonly #queued = new Map<string, QueuedOutput>()
  #queuedChars = 0
  #flushScheduled = false
  #lastFlushAt = -Infinity
  #lastFlushChars = 0
  readonly #frameBuffers = new FrameBufferPool()
  readonly #flush = (): void => {
    this.#flushScheduled = false
    this.flushOutput()
  }

  /** Wrap an accepted socket. */
  constructor(socket: Socket) {
    this.socket = socket
  }

  /**
   * Whether nothing more may be written to the connection: destroyed, or ended by the host (a
   * close ends every connection once its frames are out, see `endConnections`). Why ended counts:
   * since the node-pty provider reports the exits its disposal caused that come after its deadline
   * (7 Dec), a closing host hears such an exit while it waits for its connections to drain; its
   * frame, written after `end()`, failed the socket (`ERR_STREAM_WRITE_AFTER_END`), which destroyed
   * it — cutting off what the close was still flushing to that client.
   */
  get closedForWriting(): boolean {
    return this.socket.destroyed || this.socket.writableEnded
  }

  /**
   * Queue output of `ptyId` ending at absolute sequence `seq`; sent at the end of this turn. `data`
   * is text, or UTF-8 bytes of whole characters with their char count `chars`.
   */
  queueOutput(ptyId: string, data: string, seq: number, incarnationId: string | undefined): void
  queueOutput(ptyId: string, data: Uint8Array, seq: number, incarnationId: string | undefined, chars: number): void
  queueOutput(ptyId: string, data: string | Uint8Array, seq: number, incarnationId: string | undefined, chars?: number): void {
    if (this.closedForWriting) return
    const length = typeof data === 'string' ? data.length : chars!
    const queued = this.#queued.get(ptyId)
    if (queued === undefined) this.#queued.set(ptyId, { parts: [data], chars: length, splitsSurrogatePair: endsInHighSurrogate(data), seq, incarnationId })
    else {
      queued.parts.push(data)
      queued.chars += length
      if (endsInHighSurrogate(data)) queued.splitsSurrogatePair = true
      queued.seq = seq
    }
    this.#queuedChars += length
    if (this.#queuedChars >= PTY_HOST_OUTPUT_FLUSH_CHARS) {
      this.flushOutput()
      return
    }
    if (this.#flushScheduled) return
    this.#flushScheduled = true
    const streaming = this.#lastFlushChars >= PTY_HOST_OUTPUT_STREAMING_CHARS && performance.now() - this.#lastFlushAt < PTY_HOST_OUTPUT_COALESCE_MS
    if (streaming) setTimeout(this.#flush, PTY_HOST_OUTPUT_COALESCE_MS)
    else setImmediate(this.#flush)
  }

  /** Write every queued output frame now (in one corked write). */
  flushOutput(): void {
    if (this.#queued.size === 0) return
    this.#lastFlushChars = this.#queuedChars
    this.#queuedChars = 0
    this.#lastFlushAt = performance.now()
    if (this.closedForWriting) {
      this.#queued.clear()
      return
    }
    this.socket.cork()
    for (const [ptyId, queued] of this.#queued) {
      if (queued.chars <= PTY_HOST_OUTPUT_FRAME_MAX_CHARS && !queued.splitsSurrogatePair) {
        // The usual case: the parts go into one frame as they are, never joined into one string.
        this.#writeFrame(encodeOutputFrame(ptyId, queued.seq, queued.parts, queued.incarnationId, this.#frameBuffers.allocate))
        continue
      }
      const data = queued.parts.map((part) => (typeof part === 'string' ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString('utf8'))).join('')
      // Never between the two halves of a surrogate pair (each half alone would not survive UTF-8).
      let end = queued.seq - data.length
      for (const piece of textPieces(data, PTY_HOST_OUTPUT_FRAME_MAX_CHARS)) {
        end += piece.length
        this.#writeFrame(encodeOutputFrame(ptyId, end, piece, queued.incarnationId, this.#frameBuffers.allocate))
      }
    }
    this.#queued.clear()
    this.socket.uncork()
  }

  /** Write a frame just encoded; a lent buffer goes back to the pool once the socket is done with it. */
  #writeFrame(frame: Buffer): void {
    const lent = this.#frameBuffers.takeLent()
    if (lent === null) this.socket.write(frame)
    else this.socket.write(frame, () => this.#frameBuffers.release(lent))
  }

  /**
   * Send a JSON message after the queued output. `written` (optional) learns whether the bytes
   * were handed to the kernel (`false`: the connection was already gone or the write failed).
   */
  send(message: PtyHostMessage, written?: (ok: boolean) => void): void {
    if (this.closedForWriting) {
      written?.(false)
      return
    }
    this.flushOutput()
    let frame = encodeFrame(message)
    const bodyBytes = frame.length - HEADER_BYTES
    if (bodyBytes > PTY_HOST_MAX_FRAME_BYTES) {
      // The client would drop the connection (and every PTY on it) at a frame over the limit:
      // a reply that large answers as a failed call instead.
      if (message.type !== 'reply') return written?.(false)
      frame = encodeFrame({
        v: message.v,
        type: 'reply',
        id: message.id,
        ok: false,
        error: { code: 'host_error', message: `The reply (${bodyBytes} bytes) is larger than a frame holds (${PTY_HOST_MAX_FRAME_BYTES} bytes)` },
      })
    }
    if (written === undefined) this.socket.write(frame)
    else this.socket.write(frame, (error) => written(error === undefined || error === null))
  }
}
