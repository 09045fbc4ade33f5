/**
 * The exit drain's end-of-output marker (where the drain holds the slave side: see
 * `drain-marker-proof.ts`): minting markers nobody can guess, and the scanner that cuts one out of
 * the output.
 */
import { randomFillSync } from 'node:crypto'
import { ByteSentinelScanner } from './byte-sentinel-scanner.js'
import { SentinelScanner } from './sentinel-scanner.js'

/**
 * The start of the end-of-output marker. Upper-case letters and hex digits only: no output flag a
 * dead child may have left on the terminal (`ONLCR`, `OCRNL`, `OLCUC`, tab expansion) changes
 * them, so the marker comes back out of the master exactly as it went in.
 */
export const NODE_PTY_DRAIN_MARKER_PREFIX = 'PTYKITDRAIN'

/** Random bytes in each marker (hex-encoded): no program output can guess it. */
export const NODE_PTY_DRAIN_MARKER_NONCE_BYTES = 12

/**
 * How many markers' worth of random bytes are drawn from the OS at once. One `randomFillSync`
 * per marker cost ~30 µs per spawn (measured); a pool amortises it, and each marker still gets
 * bytes of its own that no other marker (nor any program) saw.
 */
export const NODE_PTY_DRAIN_MARKER_POOL_SIZE = 128

const markerPool = Buffer.alloc(NODE_PTY_DRAIN_MARKER_NONCE_BYTES * NODE_PTY_DRAIN_MARKER_POOL_SIZE)
let markerPoolOffset = markerPool.length

/** A fresh marker: the prefix and never-reused random bytes, upper-case hex. */
export function mintMarker(): string {
  if (markerPoolOffset + NODE_PTY_DRAIN_MARKER_NONCE_BYTES > markerPool.length) {
    randomFillSync(markerPool)
    markerPoolOffset = 0
  }
  const start = markerPoolOffset
  markerPoolOffset += NODE_PTY_DRAIN_MARKER_NONCE_BYTES
  return `${NODE_PTY_DRAIN_MARKER_PREFIX}${markerPool.toString('hex', start, markerPoolOffset).toUpperCase()}`
}

/** What a drain's marker scanner does, for either kind of chunk (text, or bytes in bytes mode). */
export type MarkerScanner<C extends string | Buffer> = {
  /** True once the marker was found (or the scanner flushed). */
  readonly spent: boolean
  /** Feed a chunk: what comes before the marker, whether it was found, and what follows it. */
  push(chunk: C): { before: C; found: boolean; after: C }
  /** What is held back as a possible start of the marker. */
  flush(): C
}

/** A scanner for `marker`, in bytes (`bytes: true`, nothing decoded or changed) or in text. */
export function createMarkerScanner<C extends string | Buffer>(marker: string, bytes: boolean): MarkerScanner<C> {
  return (bytes ? new ByteSentinelScanner(marker) : new SentinelScanner(marker)) as unknown as MarkerScanner<C>
}
