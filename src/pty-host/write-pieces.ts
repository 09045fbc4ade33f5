import { unverifiableWrite, WRITE_ACCEPTED, type WriteSettlement } from '../contracts/write-settlement.js'
import { PTY_HOST_MAX_FRAME_BYTES } from './frame-codec.js'

/** Room in a write request's frame for everything around its text (version, type, id, method, keys). */
const WRITE_ENVELOPE_BYTES = 256

/** Room for the incarnation id a write names (at most 128 code units, 6 JSON bytes each at worst). */
const INCARNATION_ID_JSON_BYTES = 6 * 128

/**
 * The most UTF-16 code units one `write` request carries to the host: a longer write (a big paste,
 * a file piped in) is sent as several requests, in order. Why: a request is one JSON frame, and a
 * code unit can take 6 bytes of it (`\u0001`), so 1 Mi units stay below the frame limit both sides
 * enforce ({@link PTY_HOST_MAX_FRAME_BYTES}, 16 MiB) — a larger frame made the host drop the
 * connection, and every PTY of the app became unverifiable until the reconnect.
 */
export const PTY_HOST_WRITE_PIECE_CHARS = 1024 * 1024

// The guarantee above, checked where the two numbers meet: 6 bytes per unit, a PTY id of 64 KiB.
if (6 * (PTY_HOST_WRITE_PIECE_CHARS + 64 * 1024) + INCARNATION_ID_JSON_BYTES + WRITE_ENVELOPE_BYTES > PTY_HOST_MAX_FRAME_BYTES) throw new Error('PTY_HOST_WRITE_PIECE_CHARS outgrows the frame limit')

/**
 * The piece size for a host that accepts frames of at most `maxFrameBytes` (its welcome says; a
 * host may be started with a smaller `maxFrameBytes` than the default), for a PTY id of
 * `ptyIdLength` code units: {@link PTY_HOST_WRITE_PIECE_CHARS} or less, so that a piece of the
 * worst escaping (6 JSON bytes a code unit) fits beside the longest incarnation id a write may
 * name; at least 2 code units (a surrogate pair).
 */
export function writePieceCharsFor(maxFrameBytes: number, ptyIdLength = 0): number {
  return Math.max(2, Math.min(PTY_HOST_WRITE_PIECE_CHARS, Math.floor((maxFrameBytes - WRITE_ENVELOPE_BYTES - INCARNATION_ID_JSON_BYTES) / 6) - ptyIdLength))
}

/**
 * The most bytes one `writeBytes` request carries to the host (4 MiB of base64): a longer write
 * of bytes is sent as several requests, in order, as a long text write is. Base64 has no escapes
 * (4 JSON bytes per 3 bytes), so a piece fills the frame more than a text piece may.
 */
export const PTY_HOST_WRITE_PIECE_BYTES = 3 * 1024 * 1024

// The guarantee above, checked where the numbers meet: base64 of a piece, a PTY id of 64 KiB.
if ((PTY_HOST_WRITE_PIECE_BYTES / 3) * 4 + 6 * 64 * 1024 + INCARNATION_ID_JSON_BYTES + WRITE_ENVELOPE_BYTES > PTY_HOST_MAX_FRAME_BYTES) throw new Error('PTY_HOST_WRITE_PIECE_BYTES outgrows the frame limit')

/**
 * The piece size of a write of bytes for a host that accepts frames of at most `maxFrameBytes`,
 * for a PTY id of `ptyIdLength` code units: {@link PTY_HOST_WRITE_PIECE_BYTES} or less, a
 * multiple of 3 (base64 without padding inside a write), at least 3.
 */
export function writePieceBytesFor(maxFrameBytes: number, ptyIdLength = 0): number {
  const room = maxFrameBytes - WRITE_ENVELOPE_BYTES - INCARNATION_ID_JSON_BYTES - 6 * ptyIdLength
  return Math.max(3, Math.min(PTY_HOST_WRITE_PIECE_BYTES, Math.floor(room / 4) * 3))
}

/** `bytes` cut into views of at most `maxBytes` each, in order; `[bytes]` when it fits. */
export function bytePieces(bytes: Uint8Array, maxBytes: number = PTY_HOST_WRITE_PIECE_BYTES): Uint8Array[] {
  if (bytes.length <= maxBytes) return [bytes]
  const pieces: Uint8Array[] = []
  for (let start = 0; start < bytes.length; start += maxBytes) pieces.push(bytes.subarray(start, start + maxBytes))
  return pieces
}

/**
 * `data` cut into pieces of at most `maxChars` code units, never between the two halves of a
 * surrogate pair (each half alone would arrive as U+FFFD). `[data]` when it fits. Used for the
 * app's write requests and for the host's output frames of a long replay.
 */
export function textPieces(data: string, maxChars: number = PTY_HOST_WRITE_PIECE_CHARS): string[] {
  if (data.length <= maxChars) return [data]
  const pieces: string[] = []
  let start = 0
  while (data.length - start > maxChars) {
    let end = start + maxChars
    const code = data.charCodeAt(end - 1)
    // A high surrogate last: its low half opens the next piece instead (maxChars ≥ 2 keeps progress).
    if (code >= 0xd800 && code <= 0xdbff && maxChars > 1) end -= 1
    pieces.push(data.slice(start, end))
    start = end
  }
  pieces.push(data.slice(start))
  return pieces
}

/**
 * One settlement for a write sent as pieces, in order: `accepted` when every piece was; the first
 * refusal when every piece was refused (no byte left); `unverifiable('partial_write')` when some
 * pieces were accepted and others not; otherwise (none accepted, some unverifiable) the first
 * unverifiable reason, with bytes handed to the transport if any piece may have handed some.
 */
export function combinePieceSettlements(settlements: readonly WriteSettlement[]): WriteSettlement {
  if (settlements.length === 1) return settlements[0] as WriteSettlement
  let accepted = 0
  let refused = 0
  let firstUnverifiable: WriteSettlement | undefined
  let handedOn = false
  for (const settlement of settlements) {
    if (settlement.kind === 'accepted') accepted += 1
    else if (settlement.kind === 'refused') refused += 1
    else {
      firstUnverifiable ??= settlement
      if (settlement.bytesHandedToTransport) handedOn = true
    }
  }
  if (accepted === settlements.length) return WRITE_ACCEPTED
  if (refused === settlements.length) return settlements[0] as WriteSettlement
  if (accepted > 0) return unverifiableWrite('partial_write', true)
  const unverifiable = firstUnverifiable as Extract<WriteSettlement, { kind: 'unverifiable' }>
  return unverifiableWrite(unverifiable.reason, handedOn)
}
