import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { HeadlessScreen, ScreenSnapshot } from '../../src/pty-host/headless-screen.js'
import { SCREEN_SKIP_CANCEL } from '../../src/pty-host/screen-cursor.js'
import { PTY_HOST_DEFAULT_SCREEN_CHARS_PER_SECOND, PTY_HOST_SCREEN_FEED_TICK_MS, PTY_HOST_SCREEN_HELD_SLICE_CHARS, PTY_HOST_SCREEN_IDLE_MS, ScreenFeeder } from '../../src/pty-host/screen-feeder.js'
import { PTY_HOST_DEFAULT_HISTORY_CHARS } from '../../src/pty-host/session-history.js'
import { SessionFlow } from '../../src/pty-host/session-flow.js'
import { SessionHistory } from '../../src/pty-host/session-history.js'

/** Counts the output chars handed to it (the output here is all `x`; a skip's CAN is not output). */
class CountingScreen implements HeadlessScreen {
  handed = 0
  write(data: string): void {
    this.handed += data.replaceAll(SCREEN_SKIP_CANCEL, '').length
  }
  resize(): void {}
  clear(): void {}
  snapshot(): Promise<ScreenSnapshot> {
    return Promise.resolve({ data: '', cols: 10, rows: 2 })
  }
  heldBytes(): number {
    return 0
  }
  dispose(): void {}
}

const RATE = 1_000
const BURST = RATE * 0.1
const SESSIONS = 3

type Step =
  | { kind: 'output'; session: number; chars: number }
  | { kind: 'tick'; ms: number }
  | { kind: 'hold'; session: number; held: boolean }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('output' as const), session: fc.nat({ max: SESSIONS - 1 }), chars: fc.integer({ min: 1, max: 300 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(PTY_HOST_SCREEN_FEED_TICK_MS, PTY_HOST_SCREEN_FEED_TICK_MS, 45, 250) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hold' as const), session: fc.nat({ max: SESSIONS - 1 }), held: fc.boolean() }) },
)

/**
 * The steps, with quiet spells: a run of ticks with no output in between, long enough for a
 * session to go idle. Without them a session was never idle (no 80-step sequence of 300 runs had
 * five looks in a row without output), so the idle branch of the property never ran.
 */
const steps: fc.Arbitrary<Step[]> = fc
  .array(fc.oneof({ weight: 6, arbitrary: step.map((s) => [s]) }, { weight: 1, arbitrary: fc.constant(Array.from({ length: 8 }, (): Step => ({ kind: 'tick', ms: PTY_HOST_SCREEN_FEED_TICK_MS }))) }), { maxLength: 80 })
  .map((groups) => groups.flat())

/**
 * A feeder on a clock the test moves by hand. The feeder arms at most one tick at a time (checked
 * at each arming); `advance(ms)` moves the clock and hands over the armed tick, not yet run.
 */
function feederOnTestClock(charsPerSecond: number) {
  const clock = { now: 0, armed: null as (() => void) | null }
  const feeder = new ScreenFeeder({
    charsPerSecond,
    now: () => clock.now,
    setTimer: (run) => {
      expect(clock.armed).toBeNull()
      clock.armed = run
      return () => {
        clock.armed = null
      }
    },
  })
  const advance = (ms: number): (() => void) | null => {
    clock.now += ms
    const run = clock.armed
    clock.armed = null
    return run
  }
  return { feeder, clock, advance }
}

describe('ScreenFeeder (the host’s background parse budget)', () => {
  it('spends at most the token bucket on sessions still producing and not outpaced, parses an idle session whole, and ticks only while a screen has work', () => {
    // Each kind of look the property checks, counted over all runs: each must have been seen.
    const seen = { held: 0, idle: 0, outpaced: 0, budgeted: 0 }
    fc.assert(
      fc.property(steps, fc.integer({ min: 40, max: 2_000 }), (steps, limitChars) => {
        const { feeder, clock, advance } = feederOnTestClock(RATE)
        const screens = Array.from({ length: SESSIONS }, () => new CountingScreen())
        // Whether flow control holds each session's PTY (a held session's quiet is not idleness).
        const held = screens.map(() => false)
        const histories = screens.map(
          (screen, i) => new SessionHistory(() => screen, feeder, { cols: 10, rows: 2, limitChars, scrollbackRows: 0, isProducerHeld: () => held[i]! }),
        )
        // The model: the bucket, and per session its quiet looks and whether output came since the last look.
        let tokens = BURST
        let lastTickAt = 0
        const quiet = histories.map(() => 0)
        const outputSinceLook = histories.map(() => false)
        for (const s of steps) {
          if (s.kind === 'output') {
            histories[s.session]!.append('x'.repeat(s.chars))
            outputSinceLook[s.session] = true
          } else if (s.kind === 'hold') {
            held[s.session] = s.held
          } else {
            const run = advance(s.ms)
            if (run === null) continue
            tokens = Math.min(BURST, tokens + ((clock.now - lastTickAt) / 1000) * RATE)
            lastTickAt = clock.now
            const before = screens.map((screen) => screen.handed)
            const pendingBefore = histories.map((history) => history.screen.pendingChars)
            const looked = histories.map((history) => history.screen.pendingChars > 0)
            // A flood (more than half the ring pending) is not fed from the budget: it would be skipped.
            const outpaced = histories.map((history) => history.screen.pendingChars > limitChars / 2)
            const idle = histories.map((_, i) => {
              if (!looked[i]) return false
              quiet[i] = outputSinceLook[i] || held[i] ? 0 : quiet[i]! + 1
              outputSinceLook[i] = false
              return quiet[i]! * PTY_HOST_SCREEN_FEED_TICK_MS >= PTY_HOST_SCREEN_IDLE_MS
            })
            run()
            let spent = 0
            histories.forEach((history, i) => {
              const handed = screens[i]!.handed - before[i]!
              // Held: a slice outside the budget (here always all of it: the rings are small).
              if (looked[i] && held[i]) {
                seen.held += 1
                expect(handed).toBe(Math.min(pendingBefore[i]!, PTY_HOST_SCREEN_HELD_SLICE_CHARS))
              } else if (idle[i]) {
                seen.idle += 1
                expect(history.screen.pendingChars).toBe(0)
              } else if (outpaced[i]) {
                seen.outpaced += 1
                expect(handed).toBe(0)
              } else {
                if (looked[i]) seen.budgeted += 1
                spent += handed
              }
            })
            // The budget: never more than what the bucket held (shares round up by less than a char).
            expect(spent).toBeLessThan(tokens + 1)
            tokens -= spent
          }
          // Ticking exactly while some screen has output to parse, and every such screen is listed.
          const withWork = histories.filter((history) => history.screen.pendingChars > 0).length
          expect(feeder.pendingSessions).toBe(withWork)
          expect(clock.armed !== null).toBe(withWork > 0)
          for (const history of histories) {
            expect(history.screen.seq).toBeGreaterThanOrEqual(history.retainedFrom)
            expect(history.screen.seq).toBeLessThanOrEqual(history.seq)
          }
        }
        for (const history of histories) history.dispose()
        expect(feeder.pendingSessions).toBe(0)
        expect(clock.armed).toBeNull()
      }),
      { numRuns: 300 },
    )
    expect(Object.entries(seen).filter(([, count]) => count === 0)).toEqual([])
  })

  it('parses everything pending once a session has been quiet for the idle time, whatever the budget', () => {
    const { feeder, clock, advance } = feederOnTestClock(1)
    const screen = new CountingScreen()
    const history = new SessionHistory(() => screen, feeder, { cols: 10, rows: 2, limitChars: 10_000, scrollbackRows: 0 })
    history.append('y'.repeat(5_000))
    let ticks = 0
    while (clock.armed !== null) {
      advance(PTY_HOST_SCREEN_FEED_TICK_MS)?.()
      ticks += 1
    }
    expect(screen.handed).toBe(5_000)
    expect(history.screen.pendingChars).toBe(0)
    // First look sees the output arrive; then quiet looks until the idle time has passed.
    expect(ticks).toBe(1 + PTY_HOST_SCREEN_IDLE_MS / PTY_HOST_SCREEN_FEED_TICK_MS)
    history.dispose()
  })
  it('parses a held session’s screen in slices while flow control holds its PTY, and never takes the hold for idleness', () => {
    const { feeder, clock, advance } = feederOnTestClock(1)
    const screen = new CountingScreen()
    let held = false
    const history = new SessionHistory(() => screen, feeder, { cols: 10, rows: 2, limitChars: 1024 * 1024, scrollbackRows: 0, isProducerHeld: () => held })
    const tick = (): void => advance(PTY_HOST_SCREEN_FEED_TICK_MS)?.()
    history.append('y'.repeat(300 * 1024))
    held = true
    // Held: one slice per tick, never the whole ring in one turn.
    tick()
    expect(screen.handed).toBe(PTY_HOST_SCREEN_HELD_SLICE_CHARS)
    tick()
    expect(screen.handed).toBe(2 * PTY_HOST_SCREEN_HELD_SLICE_CHARS)
    // Released before the rest: the quiet counts from here (the budget, 1 char/s, hands out next to nothing).
    held = false
    let ticks = 0
    while (clock.armed !== null) {
      tick()
      ticks += 1
      if (clock.armed !== null) expect(screen.handed).toBeLessThan(2 * PTY_HOST_SCREEN_HELD_SLICE_CHARS + 10)
    }
    expect(screen.handed).toBe(300 * 1024)
    expect(ticks).toBe(PTY_HOST_SCREEN_IDLE_MS / PTY_HOST_SCREEN_FEED_TICK_MS)
    history.dispose()
  })

  it('shares one slice per tick among the held screens, taking turns, so many held apps still block the host for one slice', () => {
    const { feeder, clock, advance } = feederOnTestClock(1)
    const screens = [new CountingScreen(), new CountingScreen(), new CountingScreen()]
    const histories = screens.map((screen) => new SessionHistory(() => screen, feeder, { cols: 10, rows: 2, limitChars: 1024 * 1024, scrollbackRows: 0, isProducerHeld: () => true }))
    for (const history of histories) history.append('z'.repeat(200 * 1024))
    const handed = (): number[] => screens.map((screen) => screen.handed)
    let before = handed()
    const firstFedAt = screens.map(() => -1)
    for (let tick = 0; clock.armed !== null; tick++) {
      advance(PTY_HOST_SCREEN_FEED_TICK_MS)?.()
      const now = handed()
      const fed = now.map((chars, i) => chars - before[i]!)
      expect(fed.reduce((sum, chars) => sum + chars, 0)).toBeLessThanOrEqual(PTY_HOST_SCREEN_HELD_SLICE_CHARS)
      fed.forEach((chars, i) => {
        if (chars > 0 && firstFedAt[i]! < 0) firstFedAt[i] = tick
      })
      before = now
    }
    // Everything parsed, every screen's turn came within the first three ticks.
    expect(handed()).toEqual(screens.map(() => 200 * 1024))
    expect(Math.max(...firstFedAt)).toBeLessThanOrEqual(2)
    for (const history of histories) history.dispose()
  })

  it('keeps a slow app’s screen exact through a flood many rings long: nothing is skipped after the first hold', () => {
    // A flood through the host's default sizes, the app acknowledging 2.5 or 5 MB/s: flow control
    // holds the PTY between bursts of about a ring each, every burst outpacing the budget.
    for (const ackCharsPerMs of [2_500, 5_000]) {
      const { feeder, clock, advance } = feederOnTestClock(PTY_HOST_DEFAULT_SCREEN_CHARS_PER_SECOND)
      const screen = new CountingScreen()
      const flow = new SessionFlow(
        () => undefined,
        () => undefined,
      )
      const history = new SessionHistory(() => screen, feeder, { cols: 10, rows: 2, limitChars: PTY_HOST_DEFAULT_HISTORY_CHARS, scrollbackRows: 0, isProducerHeld: () => flow.paused })
      const app = {}
      flow.acknowledge(app, 0)
      const flood = 20_000_000
      const producerCharsPerMs = 64 * 1024
      let produced = 0
      let sinceTick = 0
      // What the first burst put past the ring before the first hold (the app was not behind yet).
      let skippedBeforeFirstHold: number | null = null
      for (let ms = 0; produced < flood || clock.armed !== null; ms++) {
        clock.now = ms
        if (!flow.paused && produced < flood) {
          const chars = Math.min(producerCharsPerMs, flood - produced)
          history.append('x'.repeat(chars))
          produced += chars
          flow.noteSent(app, chars)
        }
        if (flow.paused) skippedBeforeFirstHold ??= history.screen.skippedChars
        flow.acknowledge(app, Math.min(flow.unacknowledged(app), ackCharsPerMs))
        // The feeder's tick every 20 ms of this clock.
        if (clock.armed !== null && ++sinceTick >= PTY_HOST_SCREEN_FEED_TICK_MS) {
          sinceTick = 0
          advance(0)?.()
        }
      }
      expect(skippedBeforeFirstHold).not.toBeNull()
      expect(history.screen.skippedChars).toBe(skippedBeforeFirstHold)
      expect(screen.handed + history.screen.skippedChars).toBe(flood)
      history.dispose()
    }
  })

  it('leaves a flooding session’s screen alone (its parse would be skipped) and parses it whole once idle', () => {
    const { feeder, clock, advance } = feederOnTestClock(RATE)
    const limitChars = 1_000
    const flooding = new CountingScreen()
    const steady = new CountingScreen()
    const flood = new SessionHistory(() => flooding, feeder, { cols: 10, rows: 2, limitChars, scrollbackRows: 0 })
    const trickle = new SessionHistory(() => steady, feeder, { cols: 10, rows: 2, limitChars, scrollbackRows: 0 })
    const tick = (): void => advance(PTY_HOST_SCREEN_FEED_TICK_MS)?.()
    // A flood: far more output per tick than the budget, so more than half the ring stays pending.
    for (let i = 0; i < 10; i++) {
      flood.append('x'.repeat(700))
      trickle.append('x'.repeat(5))
      tick()
    }
    expect(flooding.handed).toBe(0)
    expect(flood.screen.skippedChars).toBe(7_000 - limitChars)
    // The budget went to the session it can keep current.
    expect(steady.handed).toBe(50)
    // Output just under half the ring is fed from the budget as before.
    const below = new CountingScreen()
    const modest = new SessionHistory(() => below, feeder, { cols: 10, rows: 2, limitChars, scrollbackRows: 0 })
    modest.append('x'.repeat(limitChars / 2))
    tick()
    expect(below.handed).toBeGreaterThan(0)
    // Idle: the flood's screen parses the whole ring at once.
    while (clock.armed !== null) tick()
    expect(flooding.handed).toBe(limitChars)
    expect(flood.screen.pendingChars).toBe(0)
    for (const history of [flood, trickle, modest]) history.dispose()
  })
})
