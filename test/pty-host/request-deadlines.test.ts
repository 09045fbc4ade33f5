import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RequestDeadlines, type DeadlineClock, type DeadlineEntry } from '../../src/pty-host/request-deadlines.js'

/**
 * A simulated clock whose timers may fire up to `earlyMs` before their time (as Node's do on
 * `performance.now()`: they count from the loop's cached time), never in the past, and always
 * make progress.
 */
function simulatedClock(earlyMs: () => number): DeadlineClock & { advanceTo(time: number): void; armed(): number; time: number } {
  let nextTimer = 0
  const timers = new Map<number, { at: number; callback: () => void }>()
  const clock = {
    time: 0,
    now: () => clock.time,
    setTimer(callback: () => void, ms: number): unknown {
      const id = nextTimer++
      timers.set(id, { at: clock.time + Math.max(ms - earlyMs(), MIN_TIMER_MS), callback })
      return id
    },
    clearTimer(timer: unknown): void {
      timers.delete(timer as number)
    },
    advanceTo(time: number): void {
      for (;;) {
        let next: [number, { at: number; callback: () => void }] | undefined
        for (const entry of timers) if (entry[1].at <= time && (next === undefined || entry[1].at < next[1].at)) next = entry
        if (next === undefined) break
        timers.delete(next[0])
        clock.time = next[1].at
        next[1].callback()
      }
      clock.time = time
    },
    armed: () => timers.size,
  }
  return clock
}

/** The least a simulated timer waits (Node's timers wait at least 1 ms; less here, to be strict). */
const MIN_TIMER_MS = 0.25

type Entry = DeadlineEntry & { key: number; cancelledAt?: number }

type Step = { kind: 'add'; timeoutMs: number } | { kind: 'cancel'; pick: number } | { kind: 'advance'; ms: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  // Mostly one timeout (a provider's requests share one), sometimes another.
  fc.record({ kind: fc.constant('add' as const), timeoutMs: fc.oneof(fc.constant(30), fc.integer({ min: 0, max: 60 })) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  // Hundredths of a ms (fc.double would mostly make tiny steps, and time would hardly pass).
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 2_500 }).map((hundredths) => hundredths / 100) }),
)

describe('request deadlines (one timer per connection)', () => {
  it('fails every request whose deadline passed exactly once and never early; a reply (cancel) means it never fails', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), fc.array(fc.integer({ min: 0, max: 9 }).map((tenths) => tenths / 10), { minLength: 1, maxLength: 8 }), (steps, earliness) => {
        let early = 0
        const clock = simulatedClock(() => earliness[early++ % earliness.length]!)
        const expired: { entry: Entry; at: number }[] = []
        const deadlines = new RequestDeadlines<Entry>((entry) => expired.push({ entry, at: clock.time }), clock)
        const entries: Entry[] = []
        for (const s of steps) {
          if (s.kind === 'add') {
            const entry: Entry = { key: entries.length, deadline: 0, waiting: false }
            entries.push(entry)
            deadlines.add(entry, s.timeoutMs)
            expect(entry.deadline).toBe(clock.time + s.timeoutMs)
          } else if (s.kind === 'cancel') {
            const waiting = entries.filter((entry) => entry.waiting)
            const entry = waiting[s.pick % Math.max(1, waiting.length)]
            if (entry === undefined) continue
            deadlines.cancel(entry)
            entry.cancelledAt = clock.time
            deadlines.cancel(entry) // twice: a no-op
          } else clock.advanceTo(clock.time + s.ms)
          const now = clock.time
          // Exactly once, never early, never after a cancel, in deadline order.
          const keys = expired.map(({ entry }) => entry.key)
          expect(new Set(keys).size).toBe(keys.length)
          for (const { entry, at } of expired) {
            expect(at).toBeGreaterThanOrEqual(entry.deadline)
            expect(entry.cancelledAt).toBeUndefined()
            expect(entry.waiting).toBe(false)
          }
          for (let i = 1; i < expired.length; i++) expect(expired[i]!.entry.deadline).toBeGreaterThanOrEqual(expired[i - 1]!.entry.deadline)
          // Every entry whose deadline passed (by more than a timer's least wait) has failed.
          for (const entry of entries) {
            if (entry.cancelledAt === undefined && entry.deadline + MIN_TIMER_MS < now) expect(keys).toContain(entry.key)
          }
          expect(deadlines.size).toBe(entries.filter((entry) => entry.waiting).length)
          // One timer at most, and one whenever an entry waits.
          expect(clock.armed()).toBeLessThanOrEqual(1)
          if (deadlines.size > 0) expect(clock.armed()).toBe(1)
        }
      }),
    )
  })

  it('arms its timer once for a stream of requests with one timeout, however many are answered', () => {
    const clock = simulatedClock(() => 0)
    let armed = 0
    const counting: DeadlineClock = { ...clock, now: clock.now, setTimer: (callback, ms) => (armed++, clock.setTimer(callback, ms)) }
    const deadlines = new RequestDeadlines<Entry>(() => undefined, counting)
    for (let i = 0; i < 1_000; i++) {
      const entry: Entry = { key: i, deadline: 0, waiting: false }
      deadlines.add(entry, 30_000)
      clock.advanceTo(clock.time + 1)
      deadlines.cancel(entry)
    }
    expect(armed).toBe(1)
    expect(deadlines.size).toBe(0)
  })

  it('clear() cancels every entry and its timer', () => {
    const clock = simulatedClock(() => 0)
    const expired: Entry[] = []
    const deadlines = new RequestDeadlines<Entry>((entry) => expired.push(entry), clock)
    const entries = Array.from({ length: 5 }, (_, key): Entry => ({ key, deadline: 0, waiting: false }))
    for (const entry of entries) deadlines.add(entry, 10 + entry.key)
    deadlines.clear()
    expect(clock.armed()).toBe(0)
    clock.advanceTo(100)
    expect(expired).toEqual([])
    expect(entries.every((entry) => !entry.waiting)).toBe(true)
  })
})
