/**
 * Length-prefixed JSON frames: a 4-byte big-endian byte length, then that many bytes of UTF-8
 * JSON. The simplest framing that is binary-safe and can refuse an oversized frame from its
 * header, before buffering it.
 */

/** The largest frame either side accepts by default (16 MiB): far above any output chunk. */
export const PTY_HOST_MAX_FRAME_BYTES = 16 * 1024 * 1024

import { PtyHostFrameError } from './pty-host-frame-error.js'

export { PtyHostFrameError }

const HEADER_BYTES = 4

/** Encode one message as a frame. */
export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8')
  const frame = Buffer.allocUnsafe(HEADER_BYTES + body.length)
  frame.writeUInt32BE(body.length, 0)
  body.copy(frame, HEADER_BYTES)
  return frame
}

/**
 * Splits a byte stream into decoded messages. `push` returns every complete message so far and
 * throws a {@link PtyHostFrameError} on the first bad frame (the stream is then unusable).
 */
export class FrameDecoder {
  readonly #maxFrameBytes: number
  #chunks: Buffer[] = []
  #buffered = 0

  /** @param maxFrameBytes - the largest body accepted. */
  constructor(maxFrameBytes: number = PTY_HOST_MAX_FRAME_BYTES) {
    this.#maxFrameBytes = maxFrameBytes
  }

  /** Feed bytes; returns the complete messages they finish (plain JSON objects). */
  push(chunk: Buffer): Record<string, unknown>[] {
    this.#chunks.push(chunk)
    this.#buffered += chunk.length
    const messages: Record<string, unknown>[] = []
    for (;;) {
      if (this.#buffered < HEADER_BYTES) return messages
      const buffer = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#buffered)
      const length = buffer.readUInt32BE(0)
      if (length > this.#maxFrameBytes) {
        throw new PtyHostFrameError('oversized', `A frame announced ${length} bytes, more than the limit of ${this.#maxFrameBytes}`)
      }
      if (buffer.length < HEADER_BYTES + length) {
        this.#chunks = [buffer]
        return messages
      }
      const body = buffer.subarray(HEADER_BYTES, HEADER_BYTES + length)
      const rest = buffer.subarray(HEADER_BYTES + length)
      this.#chunks = rest.length === 0 ? [] : [rest]
      this.#buffered = rest.length
      let parsed: unknown
      try {
        parsed = JSON.parse(body.toString('utf8'))
      } catch (error) {
        throw new PtyHostFrameError('malformed', `A frame is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new PtyHostFrameError('malformed', 'A frame is not a JSON object')
      }
      messages.push(parsed as Record<string, unknown>)
    }
  }
}
