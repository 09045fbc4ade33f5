import { randomFillSync } from 'node:crypto'

/** How many UUIDs' worth of entropy one `randomFillSync` call fetches (Node's `randomUUID` caches as many). */
const UUIDS_PER_ENTROPY_BATCH = 128

/** `0`–`9`, `a`–`f` as character codes: a byte's two hex digits are two lookups. */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1')

let entropy: Buffer | null = null
/** Where the next UUID's 16 bytes start in {@link entropy}; at the end, a new batch is fetched. */
let entropyOffset = UUIDS_PER_ENTROPY_BATCH * 16
/** The text of the UUID being minted, one byte per character. */
const text = Buffer.alloc(36, '-')

/**
 * A fresh random (version 4) UUID, as `crypto.randomUUID()` mints it — the same format, from the
 * same CSPRNG, its entropy fetched in batches of 128 as Node's own — but built as one flat string.
 *
 * Why not `randomUUID()`: it builds its text by concatenation, a rope of ~14 pieces (~0.5 KiB of
 * heap, measured) that lives as long as the id does and is flattened on its first read; a PTY
 * keeps two (its id and its incarnation). Here the 36 characters are written into one scratch
 * buffer and copied out once (~56 B). Every byte allocated between two forks is a page the next
 * fork makes the host fault on again (docs/performance.md, "Where concurrent spawns go").
 */
export function mintUuid(): string {
  if (entropy === null || entropyOffset === entropy.length) {
    entropy ??= Buffer.allocUnsafe(UUIDS_PER_ENTROPY_BATCH * 16)
    randomFillSync(entropy)
    entropyOffset = 0
  }
  const at = entropyOffset
  entropyOffset += 16
  let position = 0
  for (let i = 0; i < 16; i++) {
    // The dashes of 8-4-4-4-12 stay where `Buffer.alloc(36, '-')` put them.
    if (i === 4 || i === 6 || i === 8 || i === 10) position++
    let byte = entropy[at + i] as number
    if (i === 6) byte = (byte & 0x0f) | 0x40 // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // variant 10xx (RFC 9562)
    text[position++] = HEX_DIGITS[byte >>> 4] as number
    text[position++] = HEX_DIGITS[byte & 0x0f] as number
  }
  return text.toString('latin1', 0, 36)
}
