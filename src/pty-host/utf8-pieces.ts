import { isAscii } from 'node:buffer'

/**
 * The host reads its PTYs as bytes (the node-pty provider's `output: 'bytes'`) and never builds a
 * string of the output on its hot path: the bytes go into the replay ring and out in frames as
 * they are. The app still counts output in chars (UTF-16 code units, what its `data` events
 * carry), so each read is cut into a **piece** of whole UTF-8 characters, with its char count.
 *
 * A read may end inside a multi-byte character: the bytes of that unfinished character are held
 * back and lead the next read. A piece therefore never splits a character, and any piece decoded
 * on its own gives exactly the chars the whole stream decoded at once gives at that place: the
 * app's per-frame decode, the ring's reads and the char counts all agree, with a multi-byte
 * character split across reads arriving whole.
 */

/** Whole UTF-8 characters of a PTY's output, and how many chars (UTF-16 code units) they decode to. */
export type Utf8Piece = {
  /** The bytes (never ending inside a character). */
  bytes: Buffer
  /** `bytes.toString('utf8').length`, computed without decoding when the bytes are ASCII. */
  chars: number
}

/**
 * How many bytes at the end of `bytes` are the start of a character whose remaining bytes have
 * not arrived (0 to 3). Holding back a byte that turns out invalid is harmless: the cut is always
 * before a byte that starts a character, where a decoder starts afresh anyway.
 */
export function unfinishedUtf8Tail(bytes: Uint8Array): number {
  const end = bytes.length
  for (let back = 1; back <= 3 && back <= end; back++) {
    const byte = bytes[end - back]!
    // A continuation byte (10xxxxxx): the character started further back.
    if ((byte & 0xc0) === 0x80) continue
    if (byte < 0xc0) return 0
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2
    return length > back ? back : 0
  }
  return 0
}

/** The char count of whole-character UTF-8 `bytes`. */
export function utf8Chars(bytes: Buffer): number {
  return isAscii(bytes) ? bytes.length : bytes.toString('utf8').length
}

/** Cuts one PTY's reads into {@link Utf8Piece}s, holding back an unfinished character. */
export class Utf8PieceCutter {
  #held: Buffer | null = null

  /** The whole characters of `read` (after the bytes held back from the previous read), or `null` when there are none yet. */
  cut(read: Uint8Array): Utf8Piece | null {
    const data = this.#held === null ? Buffer.from(read.buffer, read.byteOffset, read.byteLength) : Buffer.concat([this.#held, read])
    const tail = unfinishedUtf8Tail(data)
    // A copy: the held bytes must not keep a whole read buffer alive.
    this.#held = tail === 0 ? null : Buffer.from(data.subarray(data.length - tail))
    if (data.length === tail) return null
    const bytes = tail === 0 ? data : data.subarray(0, data.length - tail)
    return { bytes, chars: utf8Chars(bytes) }
  }

  /** The output ended: the held bytes of an unfinished character, which decode to replacement chars. */
  end(): Utf8Piece | null {
    const held = this.#held
    this.#held = null
    return held === null ? null : { bytes: held, chars: utf8Chars(held) }
  }
}
