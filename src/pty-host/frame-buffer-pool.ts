/**
 * Reused memory for large output frames. Why: a fresh buffer per frame of a flood (hundreds of
 * KiB, above Node's small-buffer pool) is a new allocation each time, whose pages the kernel maps
 * and zeroes again — measured at ~3.6 ms of CPU per MB of output, five times the UTF-8 encoding it
 * holds. A frame is written into a buffer lent by the pool, and the buffer comes back once the
 * socket is done with it (the write's callback), so a flood cycles through a few buffers.
 */

/** Frames at least this large are encoded into a lent buffer; smaller ones come from Node's own pool. */
export const FRAME_BUFFER_MIN_BYTES = 16 * 1024

/** The largest frame encoded into a lent buffer: a full flush of plain text (256 Ki chars) with room to spare. Larger frames are allocated as before. */
export const FRAME_BUFFER_BYTES = 1024 * 1024

/** Buffers kept for reuse per connection (more may be in flight; those are let go when they come back). */
export const FRAME_BUFFER_SPARES = 4

/**
 * One connection's frame buffers. `allocate` is the frame encoder's allocator; after each encode,
 * {@link takeLent} says which buffer (if any) the frame lives in, to hand back through
 * {@link release} once written.
 */
export class FrameBufferPool {
  readonly #spares: Buffer[] = []
  #lent: Buffer | null = null

  /**
   * Memory for a frame of `bytes`: a lent buffer (at least `bytes` long) for a large frame, else a
   * fresh one. The smallest spare that is large enough is reused (the larger ones stay for larger
   * frames); a new lent buffer is sized to the frame rounded up to a power of two — several
   * sessions' smaller frames on one connection do not each take a buffer of the largest frame's
   * size.
   */
  readonly allocate = (bytes: number): Buffer => {
    if (bytes < FRAME_BUFFER_MIN_BYTES || bytes > FRAME_BUFFER_BYTES) {
      this.#lent = null
      return Buffer.allocUnsafe(bytes)
    }
    const spares = this.#spares
    let fits = -1
    for (let index = 0; index < spares.length; index++) {
      if (spares[index]!.length >= bytes && (fits < 0 || spares[index]!.length < spares[fits]!.length)) fits = index
    }
    // Its own allocation (never a slice of Node's shared pool): it is lent out and reused whole.
    const buffer = fits >= 0 ? spares.splice(fits, 1)[0]! : Buffer.allocUnsafeSlow(2 ** Math.ceil(Math.log2(bytes)))
    this.#lent = buffer
    return buffer
  }

  /** The buffer the last {@link allocate} lent (`null`: it allocated a fresh one). Clears it. */
  takeLent(): Buffer | null {
    const lent = this.#lent
    this.#lent = null
    return lent
  }

  /**
   * `buffer` is no longer in use (its write completed or failed): keep it for reuse. When the
   * spares are full, it takes the place of the smallest spare if it is larger. Why: a flood's frames
   * vary around a power of two (frames of 100–300 KiB take 128, 256 or 512 KiB); a pool that kept
   * whichever buffers came back first filled with the smaller sizes and allocated every larger
   * frame anew — measured, two fresh buffers (~0.5 MB of new memory, its pages faulted in, and
   * the major GCs that much memory outside the heap brings) per MB of a flood.
   */
  release(buffer: Buffer): void {
    const spares = this.#spares
    if (spares.length < FRAME_BUFFER_SPARES) {
      spares.push(buffer)
      return
    }
    let smallest = 0
    for (let index = 1; index < spares.length; index++) if (spares[index]!.length < spares[smallest]!.length) smallest = index
    if (buffer.length > spares[smallest]!.length) spares[smallest] = buffer
  }

  /** Buffers waiting for reuse (for tests). */
  get spares(): number {
    return this.#spares.length
  }
}
