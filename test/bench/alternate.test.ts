import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { alternate } from '../../bench/alternate.js'

describe('the bench alternation harness', () => {
  it('alternates which side runs first, pairs each ptykit sample with its own raw sample and drops the warm-up pairs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 3 }), async (pairs, warmupPairs) => {
        const order: string[] = []
        let step = 0
        // Each sample's value is its position in the run, so a sample names when it ran.
        const sample = (side: 'raw' | 'ptykit') => async (pairIndex: number) => {
          order.push(`${side}${pairIndex}`)
          return ++step
        }
        const result = await alternate({ pairs, warmupPairs, raw: sample('raw'), ptykit: sample('ptykit') })

        const total = pairs + warmupPairs
        expect(order).toHaveLength(2 * total)
        for (let i = 0; i < total; i++) {
          const measured = i - warmupPairs
          const expected = i % 2 === 0 ? [`raw${measured}`, `ptykit${measured}`] : [`ptykit${measured}`, `raw${measured}`]
          expect(order.slice(2 * i, 2 * i + 2)).toEqual(expected)
        }
        expect(result.raw).toHaveLength(pairs)
        expect(result.ptykit).toHaveLength(pairs)
        for (let k = 0; k < pairs; k++) {
          // Both samples of measured pair k ran at steps 2(k + warm-ups) + 1 and + 2.
          const steps = [result.raw[k], result.ptykit[k]].sort((a, b) => (a as number) - (b as number))
          expect(steps).toEqual([2 * (k + warmupPairs) + 1, 2 * (k + warmupPairs) + 2])
          expect(result.ratios[k]).toBe((result.ptykit[k] as number) / (result.raw[k] as number))
        }
        // Half the measured pairs (rounded) run each side first.
        const rawFirst = result.raw.filter((r, k) => r < (result.ptykit[k] as number)).length
        expect(Math.abs(rawFirst - (pairs - rawFirst))).toBeLessThanOrEqual(1)
      }),
    )
  })
})
