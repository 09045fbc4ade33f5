import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ListingPasses } from '../../src/node-pty/listing-pass.js'

describe('ListingPasses (listings share one pass of OS reads)', () => {
  it('serves a burst of requests made in one turn with one pass that reads each key once', async () => {
    const reads: number[] = []
    const passes = new ListingPasses<number, string>(async (key) => {
      reads.push(key)
      return `row ${key}`
    })
    // A thousand stop verifications, each listing the PTYs still live (a shrinking set).
    const requests = Array.from({ length: 1_000 }, (_, i) => passes.request(Array.from({ length: 1_000 - i }, (_, k) => k)))
    await Promise.all(requests.map((r) => r.done))
    expect(passes.passes).toBe(1)
    expect(reads.length).toBe(1_000)
    expect(requests[999]?.results.get(0)).toBe('row 0')
  })

  it('answers every request from reads that started after it, runs one pass at a time, and leaves no key unread (any interleaving)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.uniqueArray(fc.nat({ max: 6 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
        async (s, requestedKeys) => {
          let clock = 0
          let inFlight = 0
          let passOfRead = -1
          const overlaps: string[] = []
          type Read = { startedAt: number; pass: number }
          const passes: ListingPasses<number, Read> = new ListingPasses<number, Read>(async (key): Promise<Read> => {
            const startedAt = clock++
            const pass: number = passes.passes
            if (inFlight > 0 && passOfRead !== pass) overlaps.push(`pass ${pass} read ${key} while pass ${passOfRead} ran`)
            passOfRead = pass
            inFlight += 1
            await s.schedule(Promise.resolve(), `read ${key}`)
            inFlight -= 1
            return { startedAt, pass }
          })
          const answers = requestedKeys.map((keys, i) =>
            s.schedule(Promise.resolve(), `request ${i}`).then(async () => {
              const requestedAt = clock++
              const { results, done } = passes.request(keys)
              await done
              return { keys, requestedAt, results }
            }),
          )
          const settled = s.waitFor(Promise.all(answers))
          await s.waitAll()
          for (const { keys, requestedAt, results } of await settled) {
            for (const key of keys) {
              const value = results.get(key)
              expect(value).toBeDefined()
              expect(value!.startedAt).toBeGreaterThan(requestedAt)
            }
          }
          expect(overlaps).toEqual([])
        },
      ),
    )
  })

  it('lets a caller take what a pass has read so far (a listing past its deadline)', async () => {
    let release: () => void = () => {}
    const slow = new Promise<void>((resolve) => {
      release = resolve
    })
    const passes = new ListingPasses<string, string>(async (key) => {
      if (key === 'slow') await slow
      return key.toUpperCase()
    })
    const { results, done } = passes.request(['fast', 'slow'])
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(results.get('fast')).toBe('FAST')
    expect(results.has('slow')).toBe(false)
    release()
    await done
    expect(results.get('slow')).toBe('SLOW')
  })
})
