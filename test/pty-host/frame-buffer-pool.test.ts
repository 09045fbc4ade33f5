import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FRAME_BUFFER_BYTES, FRAME_BUFFER_MIN_BYTES, FRAME_BUFFER_SPARES, FrameBufferPool } from '../../src/pty-host/frame-buffer-pool.js'

describe('the frame buffer pool', () => {
  it('lends a buffer no smaller than the frame and less than twice its size, and never one that is still lent', () => {
    const frameBytes = fc.integer({ min: FRAME_BUFFER_MIN_BYTES, max: FRAME_BUFFER_BYTES })
    // Each step encodes a frame (allocate) and, maybe, completes the write of an earlier lent buffer (release).
    const step = fc.record({ bytes: frameBytes, complete: fc.nat({ max: 3 }) })
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        const pool = new FrameBufferPool()
        const inFlight: Buffer[] = []
        for (const { bytes, complete } of steps) {
          const buffer = pool.allocate(bytes)
          expect(pool.takeLent()).toBe(buffer)
          expect(buffer.length).toBeGreaterThanOrEqual(bytes)
          // A fresh buffer is sized to the frame (power of two); a reused spare is at most the largest frame's.
          expect(buffer.length).toBeLessThanOrEqual(Math.max(2 * bytes, FRAME_BUFFER_BYTES))
          expect(inFlight.includes(buffer)).toBe(false)
          inFlight.push(buffer)
          for (let i = 0; i < complete && inFlight.length > 0; i++) pool.release(inFlight.shift()!)
          expect(pool.spares).toBeLessThanOrEqual(FRAME_BUFFER_SPARES)
        }
      }),
    )
  })

  it('gives small and oversized frames fresh memory that is not lent', () => {
    const pool = new FrameBufferPool()
    for (const bytes of [1, FRAME_BUFFER_MIN_BYTES - 1, FRAME_BUFFER_BYTES + 1]) {
      expect(pool.allocate(bytes).length).toBe(bytes)
      expect(pool.takeLent()).toBeNull()
    }
  })

  it('reuses a released buffer that fits, and allocates when the spares are too small', () => {
    const pool = new FrameBufferPool()
    const small = pool.allocate(20_000)
    pool.takeLent()
    expect(small.length).toBe(32 * 1024)
    pool.release(small)
    // A frame the spare cannot hold gets its own buffer; the spare stays for a frame it fits.
    const large = pool.allocate(300_000)
    expect(large).not.toBe(small)
    expect(large.length).toBe(512 * 1024)
    expect(pool.spares).toBe(1)
    expect(pool.allocate(30_000)).toBe(small)
    expect(pool.spares).toBe(0)
  })
  it('lends the smallest spare that fits and allocates only when none does; full spares keep the largest returned (a model of the spares)', () => {
    // A flood's frames vary within a range (here within a factor of 4), a few in flight at a time.
    const stream = fc.integer({ min: FRAME_BUFFER_MIN_BYTES, max: FRAME_BUFFER_BYTES / 4 }).chain((low) =>
      fc.array(fc.record({ bytes: fc.integer({ min: low, max: 4 * low }), inFlight: fc.nat({ max: FRAME_BUFFER_SPARES }) }), { minLength: 1, maxLength: 200 }),
    )
    fc.assert(
      fc.property(stream, (steps) => {
        const pool = new FrameBufferPool()
        const inFlight: Buffer[] = []
        // The spares as the model keeps them: at most FRAME_BUFFER_SPARES; a buffer returned to
        // full spares takes the smallest one's place if it is larger, else is let go.
        const spares: Buffer[] = []
        const seen = new Set<Buffer>()
        // Each step encodes a frame; then writes complete until at most `inFlight` remain.
        for (const { bytes, inFlight: keep } of steps) {
          const fitting = spares.filter((spare) => spare.length >= bytes).sort((a, b) => a.length - b.length)
          const buffer = pool.allocate(bytes)
          pool.takeLent()
          if (fitting.length > 0) {
            expect(buffer.length).toBe(fitting[0]!.length)
            expect(spares.includes(buffer)).toBe(true)
            spares.splice(spares.indexOf(buffer), 1)
          } else {
            expect(seen.has(buffer)).toBe(false)
          }
          seen.add(buffer)
          inFlight.push(buffer)
          while (inFlight.length > keep) {
            const done = inFlight.shift()!
            pool.release(done)
            if (spares.length < FRAME_BUFFER_SPARES) spares.push(done)
            else {
              const smallest = spares.reduce((a, b) => (b.length < a.length ? b : a))
              if (done.length > smallest.length) spares[spares.indexOf(smallest)] = done
            }
            expect(pool.spares).toBe(spares.length)
          }
        }
      }),
    )
  })

  it('keeps the larger buffers when its spares are full (a flood’s larger frames are not allocated anew each time)', () => {
    const pool = new FrameBufferPool()
    const lend = (bytes: number): Buffer => {
      const buffer = pool.allocate(bytes)
      pool.takeLent()
      return buffer
    }
    const small = Array.from({ length: FRAME_BUFFER_SPARES }, () => lend(40_000))
    const large = lend(200_000)
    for (const buffer of small) pool.release(buffer)
    pool.release(large)
    expect(pool.spares).toBe(FRAME_BUFFER_SPARES)
    // The large one took a small one's place: the next large frame reuses it.
    expect(lend(200_000)).toBe(large)
    // A small frame takes the smallest spare that fits, not the large one.
    pool.release(large)
    expect(lend(40_000).length).toBe(64 * 1024)
  })
})
