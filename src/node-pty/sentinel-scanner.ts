/** What one chunk fed to a {@link SentinelScanner} yields. */
export type SentinelScan = {
  /** Text that is certainly before the marker: deliver it. */
  before: string
  /** True when the marker was found in this chunk (the scanner is then spent). */
  found: boolean
  /** Text after the marker in this chunk, when it was found; otherwise empty. */
  after: string
}

/**
 * Finds a marker in a stream of text chunks, however the stream splits it, and removes it.
 *
 * Text that might be the start of the marker is held back until the next chunk proves it is or is
 * not; everything else is released at once, in order. Pure and synchronous.
 */
export class SentinelScanner {
  readonly #marker: string
  #held = ''
  #spent = false

  /**
   * @param marker - the text to find; non-empty.
   * @throws TypeError when `marker` is empty.
   */
  constructor(marker: string) {
    if (typeof marker !== 'string' || marker.length === 0) {
      throw new TypeError(`Expected the \`marker\` option to be a non-empty string, got ${JSON.stringify(marker)} (${typeof marker})`)
    }
    this.#marker = marker
  }

  /** True once the marker was found. */
  get spent(): boolean {
    return this.#spent
  }

  /** Text currently held back as a possible start of the marker. */
  get held(): string {
    return this.#held
  }

  /** Feed the next chunk. After the marker was found, every chunk passes through whole. */
  push(chunk: string): SentinelScan {
    if (this.#spent) return { before: chunk, found: false, after: '' }
    const text = this.#held + chunk
    const index = text.indexOf(this.#marker)
    if (index >= 0) {
      this.#held = ''
      this.#spent = true
      return { before: text.slice(0, index), found: true, after: text.slice(index + this.#marker.length) }
    }
    const keep = this.#longestMarkerPrefixSuffix(text)
    this.#held = text.slice(text.length - keep)
    return { before: text.slice(0, text.length - keep), found: false, after: '' }
  }

  /** Give up: release whatever is held back. The scanner is spent afterwards. */
  flush(): string {
    const held = this.#held
    this.#held = ''
    this.#spent = true
    return held
  }

  /** The length of the longest suffix of `text` that is a proper prefix of the marker. */
  #longestMarkerPrefixSuffix(text: string): number {
    for (let length = Math.min(this.#marker.length - 1, text.length); length > 0; length -= 1) {
      if (text.endsWith(this.#marker.slice(0, length))) return length
    }
    return 0
  }
}
