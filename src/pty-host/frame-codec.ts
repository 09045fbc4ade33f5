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

/**
 * The smallest `maxFrameBytes` a host takes (4 KiB). Why a floor: below it no request fits — a
 * write's frame alone holds about 1 KiB around its text (the envelope, the longest incarnation id
 * it may name) — so a host started with `maxFrameBytes: 10` refused every client's first frame
 * and dropped the connection: started, and of no use.
 */
export const PTY_HOST_MIN_FRAME_BYTES = 4 * 1024

import { PtyHostFrameError } from './pty-host-frame-error.js'
import { unfinishedUtf8Tail } from './utf8-pieces.js'

export { PtyHostFrameError }

/** The length prefix before each frame's body (a 4-byte big-endian length). */
export const HEADER_BYTES = 4

/** The first body byte of an output frame (never the first byte of a JSON object). */
export const OUTPUT_FRAME_KIND = 0x01

/** kind (1) + seq (float64, 8) + id length (2) + incarnation length (2). */
const OUTPUT_FIXED_BYTES = 1 + 8 + 2 + 2

/** A decoded output frame, or one part of a long one (at most 64 KiB of its UTF-8): `data` ends at absolute sequence `seq` of PTY `ptyId`. */
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

/**
 * Encode serialized messages (`JSON.stringify` of each) as consecutive JSON frames (the bytes
 * {@link encodeJsonFrames} makes) into `memory` from its start, and return the view of `memory`
 * they fill; or, when they might not fit, into a fresh buffer as {@link encodeJsonFrames} does.
 * Why: a connection's small control frames (a spawn request, a write) then reuse one buffer
 * instead of measuring each JSON text's UTF-8 length and allocating for it. Whether they fit is
 * decided without measuring: a UTF-16 code unit is at most 3 bytes of UTF-8. The caller must not
 * pass `memory` while a socket may still hold it.
 */
export function encodeJsonFramesInto(jsons: readonly string[], memory: Buffer): Buffer {
  let bound = 0
  for (const json of jsons) bound += HEADER_BYTES + 3 * json.length
  if (bound > memory.length) return encodeJsonFrames(jsons)
  return memory.subarray(0, writeJsonFrames(jsons, memory))
}

/** Encode serialized messages (`JSON.stringify` of each) as consecutive JSON frames in one buffer (one socket write for all). */
export function encodeJsonFrames(jsons: readonly string[]): Buffer {
  let size = 0
  for (const json of jsons) size += HEADER_BYTES + Buffer.byteLength(json, 'utf8')
  const frames = Buffer.allocUnsafe(size)
  writeJsonFrames(jsons, frames)
  return frames
}

/** Write `jsons` as consecutive frames (length, then the UTF-8 text) from the start of `memory`, which must hold them; returns the end. */
function writeJsonFrames(jsons: readonly string[], memory: Buffer): number {
  let offset = 0
  for (const json of jsons) {
    const written = memory.write(json, offset + HEADER_BYTES, 'utf8')
    memory.writeUInt32BE(written, offset)
    offset += HEADER_BYTES + written
  }
  return offset
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

/**
 * The most UTF-8 bytes of output decoded into one string: a frame's data longer than this is
 * decoded as several consecutive `data` messages. Why: V8 puts a string above ~128 KiB in its
 * large-object space, and making one there costs about seven times as much CPU per MB (measured:
 * 7.5 ms/MB for 256 KiB strings against 1.1 ms/MB for 64 KiB ones) as a young one.
 */
export const OUTPUT_STRING_MAX_BYTES = 64 * 1024


function decodeOutputFrame(body: Buffer): OutputFrame[] {
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
  const ptyId = body.toString('utf8', 11, incarnationAt)
  const incarnationId = incarnationBytes > 0 ? body.toString('utf8', incarnationAt + 2, dataAt) : undefined
  const texts: string[] = []
  let chars = 0
  for (let start = dataAt; start < body.length || texts.length === 0; ) {
    // Each part ends before a character that has not finished, so it decodes as the whole would.
    const limit = start + OUTPUT_STRING_MAX_BYTES
    const end = limit >= body.length ? body.length : limit - unfinishedUtf8Tail(body.subarray(start, limit))
    const text = body.toString('utf8', start, end)
    texts.push(text)
    chars += text.length
    start = end
  }
  // Each part's `seq` is the sequence at its end: the frame's, less the chars of the parts after it.
  let partEnd = seq - chars
  return texts.map((data) => {
    partEnd += data.length
    const frame: OutputFrame = { type: 'data', ptyId, data, seq: partEnd }
    if (incarnationId !== undefined) frame.incarnationId = incarnationId
    return frame
  })
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

/** An assembly buffer grown past this is let go once its frame is decoded (a rare huge frame does not stay pinned). */
const KEEP_ASSEMBLY_BYTES = 1024 * 1024

/**
 * Splits a byte stream into decoded messages. `push` returns every complete message so far and
 * throws a {@link PtyHostFrameError} on the first bad frame (the stream is then unusable).
 *
 * Frames wholly inside a pushed chunk are decoded from it in place. The bytes of a frame that
 * spans chunks are copied once into one assembly buffer, which the decoder reuses frame after
 * frame. Why: a flood's frames (hundreds of KiB) span several socket reads, and a fresh buffer per
 * read plus one more to join them cost more CPU than decoding them (new memory, mapped anew).
 */
export class FrameDecoder {
  readonly #maxFrameBytes: number
  #assembly: Buffer = Buffer.alloc(0)
  /** Bytes of the unfinished frame in `#assembly`. */
  #assembled = 0
  /** The whole length (header included) of the unfinished frame, once its header is in; -1 before. */
  #frameBytes = -1

  /** @param maxFrameBytes - the largest body accepted. */
  constructor(maxFrameBytes: number = PTY_HOST_MAX_FRAME_BYTES) {
    this.#maxFrameBytes = maxFrameBytes
  }

  /**
   * Feed bytes; returns the complete messages they finish (JSON objects, and output frames as
   * `type: 'data'`). `chunk` may be a read buffer its owner reuses (a socket's `onread` buffer):
   * nothing is kept from it past the call.
   */
  push(chunk: Buffer): (Record<string, unknown> | OutputFrame)[] {
    const messages: (Record<string, unknown> | OutputFrame)[] = []
    let offset = 0
    if (this.#assembled > 0) {
      offset = this.#continueFrame(chunk, messages)
      if (this.#assembled > 0) return messages
    }
    while (chunk.length - offset >= HEADER_BYTES) {
      const length = this.#checkedLength(chunk.readUInt32BE(offset))
      if (chunk.length - offset - HEADER_BYTES < length) break
      decodeBody(chunk.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length), messages)
      offset += HEADER_BYTES + length
    }
    if (offset < chunk.length) this.#startFrame(chunk.subarray(offset))
    return messages
  }

  #checkedLength(length: number): number {
    if (length > this.#maxFrameBytes) {
      throw new PtyHostFrameError('oversized', `A frame announced ${length} bytes, more than the limit of ${this.#maxFrameBytes}`)
    }
    return length
  }

  /** Keep the start of a frame (`bytes` is shorter than the frame, or than its header). */
  #startFrame(bytes: Buffer): void {
    this.#frameBytes = bytes.length >= HEADER_BYTES ? HEADER_BYTES + bytes.readUInt32BE(0) : -1
    this.#reserve(this.#frameBytes < 0 ? HEADER_BYTES : this.#frameBytes)
    bytes.copy(this.#assembly, 0)
    this.#assembled = bytes.length
  }

  /** Add `chunk`'s bytes to the unfinished frame; returns how many were used (decoding the frame when whole). */
  #continueFrame(chunk: Buffer, messages: (Record<string, unknown> | OutputFrame)[]): number {
    let used = 0
    if (this.#frameBytes < 0) {
      used = Math.min(HEADER_BYTES - this.#assembled, chunk.length)
      chunk.copy(this.#assembly, this.#assembled, 0, used)
      this.#assembled += used
      if (this.#assembled < HEADER_BYTES) return used
      this.#frameBytes = HEADER_BYTES + this.#checkedLength(this.#assembly.readUInt32BE(0))
      this.#reserve(this.#frameBytes)
    }
    const take = Math.min(this.#frameBytes - this.#assembled, chunk.length - used)
    chunk.copy(this.#assembly, this.#assembled, used, used + take)
    this.#assembled += take
    used += take
    if (this.#assembled < this.#frameBytes) return used
    decodeBody(this.#assembly.subarray(HEADER_BYTES, this.#frameBytes), messages)
    this.#assembled = 0
    this.#frameBytes = -1
    if (this.#assembly.length > KEEP_ASSEMBLY_BYTES) this.#assembly = Buffer.alloc(0)
    return used
  }

  /** Make the assembly buffer hold at least `bytes` (keeping what it holds). */
  #reserve(bytes: number): void {
    if (this.#assembly.length >= bytes) return
    const grown = Buffer.allocUnsafeSlow(Math.max(bytes, Math.min(2 * this.#assembly.length, KEEP_ASSEMBLY_BYTES), 64 * 1024))
    this.#assembly.copy(grown, 0, 0, this.#assembled)
    this.#assembly = grown
  }
}

/** Decode one frame body into `messages` (they copy what they keep: the body's memory may be reused). */
function decodeBody(body: Buffer, messages: (Record<string, unknown> | OutputFrame)[]): void {
  if (body.length > 0 && body[0] === OUTPUT_FRAME_KIND) {
    for (const part of decodeOutputFrame(body)) messages.push(part)
  } else messages.push(decodeJsonFrame(body))
}
