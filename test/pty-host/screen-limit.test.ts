import fc from 'fast-check'
import { isPtyHostError, PTY_HOST_DEFAULT_SCROLLBACK_ROWS, PTY_HOST_MAX_SCREEN_CELLS } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { MAX_PTY_DIMENSION } from '../../src/contracts/pty-dimension.js'
import { assertScreenWithinLimit } from '../../src/pty-host/screen-limit.js'

/** The error the rule throws for `size`, or `null` when it accepts it. */
function refusal(size: { cols: number; rows: number; scrollbackRows: number }): unknown {
  try {
    assertScreenWithinLimit(size)
    return null
  } catch (error) {
    return error
  }
}

describe('the pty host screen limit: cols × (rows + scrollbackRows) ≤ PTY_HOST_MAX_SCREEN_CELLS', () => {
  it('accepts a screen of exactly the limit and refuses one cell row over it', () => {
    // 1024 × 8192 = 8 Mi cells exactly.
    expect(1024 * (7192 + 1000)).toBe(PTY_HOST_MAX_SCREEN_CELLS)
    expect(refusal({ cols: 1024, rows: 7192, scrollbackRows: 1000 })).toBeNull()
    const overByRows = refusal({ cols: 1024, rows: 7193, scrollbackRows: 1000 })
    expect(isPtyHostError(overByRows) && overByRows.code).toBe('invalid_option')
    expect(String((overByRows as Error).message)).toContain('`rows`')
    expect(String((overByRows as Error).message)).toContain('7193')
    // The scrollback counts: the same viewport with one more scrollback row is over.
    expect(refusal({ cols: 1024, rows: 7192, scrollbackRows: 1001 })).not.toBeNull()
    // And the column count: 8192 cols × 1024 rows is the limit, 8193 cols is over.
    expect(refusal({ cols: 8192, rows: 24, scrollbackRows: 1000 })).toBeNull()
    const overByCols = refusal({ cols: 8193, rows: 24, scrollbackRows: 1000 })
    expect(String((overByCols as Error).message)).toContain('`cols`')
    expect(String((overByCols as Error).message)).toContain('8193')
  })

  it('refuses the largest PTY (65 535 × 65 535) and accepts every screen a real display gives', () => {
    const largest = refusal({ cols: MAX_PTY_DIMENSION, rows: MAX_PTY_DIMENSION, scrollbackRows: PTY_HOST_DEFAULT_SCROLLBACK_ROWS })
    expect(isPtyHostError(largest) && largest.code).toBe('invalid_option')
    expect(String((largest as Error).message)).toContain('65535')
    // An 8K display at a 5-pixel font, with the default scrollback.
    expect(refusal({ cols: 1536, rows: 432, scrollbackRows: PTY_HOST_DEFAULT_SCROLLBACK_ROWS })).toBeNull()
  })

  it('accepts a screen exactly when its cell count is within the limit, and names the larger side when not', () => {
    // Small sizes too, so both sides of the limit are drawn often.
    const dimension = fc.oneof(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: MAX_PTY_DIMENSION }))
    fc.assert(
      fc.property(
        dimension,
        dimension,
        fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 100_000 })),
        (cols, rows, scrollbackRows) => {
          const error = refusal({ cols, rows, scrollbackRows })
          const within = cols * (rows + scrollbackRows) <= PTY_HOST_MAX_SCREEN_CELLS
          expect(error === null).toBe(within)
          if (!within) {
            expect(isPtyHostError(error) && error.code).toBe('invalid_option')
            const [option, value] = cols >= rows ? ['cols', cols] : ['rows', rows]
            // A resize's size is an argument, refused as a TypeError as every provider's resize refusal is (until 7 Dec an `Error` saying "option").
            expect(error).toBeInstanceOf(TypeError)
            expect((error as Error).message).toContain(`\`${option}\` argument`)
            expect((error as Error).message).toContain(`got ${value}`)
          }
        },
      ),
    )
  })
})
