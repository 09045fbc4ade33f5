/** What one chunk fed to a {@link ByteSentinelScanner} yields (views into the chunks, no copies unless a split marker forced a join). */
export type ByteSentinelScan = {
  /** Bytes that are certainly before the marker: deliver them. */
  before: Buffer
  /** True when the marker was found in this chunk (the scanner is then spent). */
  found: boolean
  /** Bytes after the marker in this chunk, when it was found; otherwise empty. */
  after: Buffer
}

const EMPTY = Buffer.alloc(0)

/**
 * The byte twin of `SentinelScanner`: finds a marker in a stream of byte chunks, however the
 * stream splits it, and removes it. Bytes that might be the start of the marker are held back
 * until the next chunk proves it is or is not; everything else is released at once, in order.
 *
 * Why bytes and not text: in the provider's bytes mode nothing is decoded, and a chunk may end in
 * the middle of a multi-byte UTF-8 sequence; scanning bytes keeps every byte exactly as read. The
 * marker is ASCII, so its bytes are its chars.
 */
export class ByteSentinelScanner {
  readonly #marker: Buffer
  #held: Buffer = EMPTY
  #spent = false

  /**
   * @param marker - the ASCII text to find; non-empty.
   * @throws TypeError when `marker` is empty.
   */
  constructor(marker: string) {
    if (typeof marker !== 'string' || marker.length === 0) {
      throw new TypeError(`Expected the \`marker\` option to be a non-empty string, got ${JSON.stringify(marker)} (${typeof marker})`)
    }
    this.#marker = Buffer.from(marker, 'latin1')
  }

  /** True once the marker was found. */
  get spent(): boolean {
    return this.#spent
  }

  /** Bytes currently held back as a possible start of the marker. */
  get held(): Buffer {
    return this.#held
  }

  /** Feed the next chunk. After the marker was found, every chunk passes through whole. */
  push(chunk: Buffer): ByteSentinelScan {
    if (this.#spent) return { before: chunk, found: false, after: EMPTY }
    const bytes = this.#held.length === 0 ? chunk : Buffer.concat([this.#held, chunk])
    const index = bytes.indexOf(this.#marker)
    if (index >= 0) {
      this.#held = EMPTY
      this.#spent = true
      return { before: bytes.subarray(0, index), found: true, after: bytes.subarray(index + this.#marker.length) }
    }
    const keep = this.#longestMarkerPrefixSuffix(bytes)
    // Why a copy: the held bytes outlive this chunk, which the consumer now owns.
    this.#held = keep === 0 ? EMPTY : Buffer.from(bytes.subarray(bytes.length - keep))
    return { before: bytes.subarray(0, bytes.length - keep), found: false, after: EMPTY }
  }

  /** Give up: release whatever is held back. The scanner is spent afterwards. */
  flush(): Buffer {
    const held = this.#held
    this.#held = EMPTY
    this.#spent = true
    return held
  }

  /** The length of the longest suffix of `bytes` that is a proper prefix of the marker. */
  #longestMarkerPrefixSuffix(bytes: Buffer): number {
    for (let length = Math.min(this.#marker.length - 1, bytes.length); length > 0; length -= 1) {
      if (this.#marker.compare(bytes, bytes.length - length, bytes.length, 0, length) === 0) return length
    }
    return 0
  }
}
