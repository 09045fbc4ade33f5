/**
 * The framing: a 4-byte big-endian body length, then the body. Two kinds of body:
 *
 * - **JSON** (every control message): UTF-8 JSON of an object, so its first byte is `{`;
 * - **output** (the host's data events, the hot path): the byte {@link OUTPUT_FRAME_KIND}, then a
 *   binary header (sequence, PTY id, incarnation id) and the output as raw UTF-8 — no JSON, no
 *   escaping, one copy in and one decode out.
 *
 * The length prefix lets a reader refuse an oversized frame from its header, before buffering it.
 * A body that starts with any byte but {@link OUTPUT_FRAME_KIND} is read as JSON, so a peer of an
 * older protocol version still gets a readable `protocol_mismatch` refusal.
 */

/** The largest frame either side accepts by default (16 MiB): far above any output chunk. */
export const PTY_HOST_MAX_FRAME_BYTES = 16 * 1024 * 1024

import { PtyHostFrameError } from './pty-host-frame-error.js'

export { PtyHostFrameError }

const HEADER_BYTES = 4

/** The first body byte of an output frame (never the first byte of a JSON object). */
export const OUTPUT_FRAME_KIND = 0x01

/** kind (1) + seq (float64, 8) + id length (2) + incarnation length (2). */
const OUTPUT_FIXED_BYTES = 1 + 8 + 2 + 2

/** A decoded output frame: `data` ends at absolute sequence `seq` of PTY `ptyId`. */
export type OutputFrame = { type: 'data'; ptyId: string; data: string; seq: number; incarnationId?: string }

/** Encode one message as a JSON frame. */
export function encodeFrame(message: unknown): Buffer {
  const json = JSON.stringify(message)
  const length = Buffer.byteLength(json, 'utf8')
  const frame = Buffer.allocUnsafe(HEADER_BYTES + length)
  frame.writeUInt32BE(length, 0)
  frame.write(json, HEADER_BYTES, 'utf8')
  return frame
}

/** Encode several messages as consecutive JSON frames in one buffer (one socket write for all). */
export function encodeFrames(messages: readonly unknown[]): Buffer {
  const jsons = messages.map((message) => JSON.stringify(message))
  const lengths = jsons.map((json) => Buffer.byteLength(json, 'utf8'))
  const frames = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + HEADER_BYTES + length, 0))
  let offset = 0
  for (let i = 0; i < jsons.length; i++) {
    offset = frames.writeUInt32BE(lengths[i]!, offset)
    offset += frames.write(jsons[i]!, offset, 'utf8')
  }
  return frames
}

/**
 * Encode output as one binary frame: header, seq (float64: exact to 2^53 chars), the ids, then
 * the output written as UTF-8 straight into the frame (one allocation, one copy). `data` may be
 * the output's consecutive parts, as text or as UTF-8 bytes: they are written one after the other,
 * never joined first. No part may end in the first half of a surrogate pair or inside a UTF-8
 * character (alone, it would not survive the peer's decoding).
 *
 * `allocate` (optional) supplies the memory: a buffer of at least the frame's length, which the
 * frame is then a view of from its start (a sender reuses its buffers: a fresh large allocation
 * per frame costs more than the encoding). Default `Buffer.allocUnsafe`.
 */
export function encodeOutputFrame(
  ptyId: string,
  seq: number,
  data: string | readonly (string | Uint8Array)[],
  incarnationId: string | undefined,
  allocate: (bytes: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  const idBytes = Buffer.byteLength(ptyId, 'utf8')
  const incarnationBytes = incarnationId === undefined ? 0 : Buffer.byteLength(incarnationId, 'utf8')
  let dataBytes = 0
  if (typeof data === 'string') dataBytes = Buffer.byteLength(data, 'utf8')
  else for (const part of data) dataBytes += typeof part === 'string' ? Buffer.byteLength(part, 'utf8') : part.byteLength
  const body = OUTPUT_FIXED_BYTES + idBytes + incarnationBytes + dataBytes
  const memory = allocate(HEADER_BYTES + body)
  const frame = memory.length === HEADER_BYTES + body ? memory : memory.subarray(0, HEADER_BYTES + body)
  let offset = frame.writeUInt32BE(body, 0)
  offset = frame.writeUInt8(OUTPUT_FRAME_KIND, offset)
  offset = frame.writeDoubleBE(seq, offset)
  offset = frame.writeUInt16BE(idBytes, offset)
  offset += frame.write(ptyId, offset, 'utf8')
  offset = frame.writeUInt16BE(incarnationBytes, offset)
  if (incarnationId !== undefined) offset += frame.write(incarnationId, offset, 'utf8')
  if (typeof data === 'string') frame.write(data, offset, 'utf8')
  else {
    for (const part of data) {
      if (typeof part === 'string') offset += frame.write(part, offset, 'utf8')
      else {
        frame.set(part, offset)
        offset += part.byteLength
      }
    }
  }
  return frame
}

function decodeOutputFrame(body: Buffer): OutputFrame {
  const malformed = (why: string): PtyHostFrameError => new PtyHostFrameError('malformed', `An output frame is malformed: ${why}`)
  if (body.length < OUTPUT_FIXED_BYTES) throw malformed(`${body.length} bytes is shorter than its header`)
  const seq = body.readDoubleBE(1)
  if (!Number.isSafeInteger(seq) || seq < 0) throw malformed(`its sequence ${seq} is not a non-negative integer`)
  const idBytes = body.readUInt16BE(9)
  const incarnationAt = 11 + idBytes
  if (incarnationAt + 2 > body.length) throw malformed('its PTY id runs past the frame')
  const incarnationBytes = body.readUInt16BE(incarnationAt)
  const dataAt = incarnationAt + 2 + incarnationBytes
  if (dataAt > body.length) throw malformed('its incarnation id runs past the frame')
  const frame: OutputFrame = { type: 'data', ptyId: body.toString('utf8', 11, incarnationAt), data: body.toString('utf8', dataAt), seq }
  if (incarnationBytes > 0) frame.incarnationId = body.toString('utf8', incarnationAt + 2, dataAt)
  return frame
}

function decodeJsonFrame(body: Buffer): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch (error) {
    throw new PtyHostFrameError('malformed', `A frame is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new PtyHostFrameError('malformed', 'A frame is not a JSON object')
  }
  return parsed as Record<string, unknown>
}

/**
 * Splits a byte stream into decoded messages. `push` returns every complete message so far and
 * throws a {@link PtyHostFrameError} on the first bad frame (the stream is then unusable). The
 * bytes of a frame are joined once, when its last byte arrives (never re-copied per chunk).
 */
export class FrameDecoder {
  readonly #maxFrameBytes: number
  #chunks: Buffer[] = []
  #buffered = 0
  /** The body length of the frame being received, once its header is in; -1 before. */
  #needed = -1

  /** @param maxFrameBytes - the largest body accepted. */
  constructor(maxFrameBytes: number = PTY_HOST_MAX_FRAME_BYTES) {
    this.#maxFrameBytes = maxFrameBytes
  }

  /**
   * Feed bytes; returns the complete messages they finish (JSON objects, and output frames as
   * `type: 'data'`). With `transient`, `chunk` is a read buffer its owner reuses (a socket's
   * `onread` buffer): the decoder copies the bytes of an unfinished frame instead of keeping it.
   */
  push(chunk: Buffer, transient = false): (Record<string, unknown> | OutputFrame)[] {
    this.#chunks.push(chunk)
    this.#buffered += chunk.length
    const messages: (Record<string, unknown> | OutputFrame)[] = []
    for (;;) {
      if (this.#buffered < HEADER_BYTES || (this.#needed >= 0 && this.#buffered < HEADER_BYTES + this.#needed)) {
        if (transient) this.#ownRetained(chunk)
        return messages
      }
      const buffer = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#buffered)
      this.#chunks = [buffer]
      const length = buffer.readUInt32BE(0)
      if (length > this.#maxFrameBytes) {
        throw new PtyHostFrameError('oversized', `A frame announced ${length} bytes, more than the limit of ${this.#maxFrameBytes}`)
      }
      if (buffer.length < HEADER_BYTES + length) {
        this.#needed = length
        if (transient) this.#ownRetained(chunk)
        return messages
      }
      this.#needed = -1
      const body = buffer.subarray(HEADER_BYTES, HEADER_BYTES + length)
      const rest = buffer.subarray(HEADER_BYTES + length)
      this.#chunks = rest.length === 0 ? [] : [rest]
      this.#buffered = rest.length
      messages.push(body.length > 0 && body[0] === OUTPUT_FRAME_KIND ? decodeOutputFrame(body) : decodeJsonFrame(body))
    }
  }

  /** Copy the retained bytes that still live in `transient` (its owner is about to overwrite them). */
  #ownRetained(transient: Buffer): void {
    for (let i = 0; i < this.#chunks.length; i++) {
      const retained = this.#chunks[i]!
      if (retained.buffer === transient.buffer) this.#chunks[i] = Buffer.from(retained)
    }
  }
}
