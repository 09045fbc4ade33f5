import { FrameDecoder, PTY_HOST_MAX_FRAME_BYTES, type OutputFrame } from './frame-codec.js'

/**
 * The read side of the app's connection to its pty host: the socket's `onread` callback (one
 * reused read buffer, no Readable stream in between) feeding a frame decoder. Its handlers change
 * once: the hello's until the host welcomed the client, then the connection's.
 */
export class ConnectionReader {
  /** Receives every batch of complete messages, in arrival order. */
  onMessages: (messages: (Record<string, unknown> | OutputFrame)[]) => void = () => undefined
  /** Receives the error of the first malformed or oversized frame; nothing is read after it. */
  onBadFrame: (error: Error) => void = () => undefined
  readonly #decoder = new FrameDecoder(PTY_HOST_MAX_FRAME_BYTES)
  #failed = false

  /** The `onread` callback: `buffer` is overwritten by the next read, so the decoder copies what it keeps. */
  readonly onRead = (bytes: number, buffer: Buffer): boolean => {
    if (this.#failed) return false
    let messages: (Record<string, unknown> | OutputFrame)[]
    try {
      messages = this.#decoder.push(buffer.subarray(0, bytes))
    } catch (error) {
      this.#failed = true
      this.onBadFrame(error as Error)
      return false
    }
    if (messages.length > 0) this.onMessages(messages)
    return true
  }
}

/** The socket options that make `socket` read through `reader` (see {@link ConnectionReader}). */
export function readThrough(reader: ConnectionReader, readBufferBytes: number): { onread: { buffer: Buffer; callback: (bytes: number, buffer: Buffer) => boolean } } {
  // Its own allocation (never a pooled slab): it is read into again on every read, so the decoder
  // copies what it keeps.
  return { onread: { buffer: Buffer.allocUnsafeSlow(readBufferBytes), callback: reader.onRead } }
}

