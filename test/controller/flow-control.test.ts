import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ProducerFlowControl, type ProducerFlowControlConfig, type ProducerFlowControlMode, type ProducerFlowTarget } from '../../src/controller/flow-control.js'
import { createManualClock } from '../../src/testing/manual-clock.js'

const TIMINGS = { highWatermarkChars: 1_000, lowWatermarkChars: 100, pauseReassertIntervalMs: 40, pauseMaxHoldMs: 150 }
const configFor = (mode: ProducerFlowControlMode): ProducerFlowControlConfig => ({ mode, ...TIMINGS })
const CONFIG = configFor('always')

type Step =
  | { kind: 'output'; chars: number }
  | { kind: 'ack'; chars: number }
  | { kind: 'iteratorAck'; chars: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'release' }
  | { kind: 'iteratorsLeft' }

const stepArb: fc.Arbitrary<Step | { kind: 'ackLeaving'; keep: number }> = fc.oneof(
  // Output weighs most: else the acks keep the count low and a pause is rare (8 of 300 runs had one).
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('output' as const), chars: fc.integer({ min: 0, max: 800 }) }) },
  fc.record({ kind: fc.constant('ack' as const), chars: fc.integer({ min: 0, max: 1_500 }) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 200 }) }),
  fc.record({ kind: fc.constant('iteratorAck' as const), chars: fc.integer({ min: 0, max: 1_500 }) }),
  fc.record({ kind: fc.constant('release' as const) }),
  fc.record({ kind: fc.constant('iteratorsLeft' as const) }),
  // An ack of all but `keep` chars in flight: lands a paused PTY near the low watermark, on either side.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ackLeaving' as const), keep: fc.integer({ min: 0, max: 2 * TIMINGS.lowWatermarkChars }) }) },
)

describe('ProducerFlowControl', () => {
  it('keeps the books: in-flight is delivered minus credited, never negative; engages, pauses, resumes and caps by the rules', () => {
    let abovePaused = 0
    let belowResumed = 0
    fc.assert(
      fc.property(fc.constantFrom<ProducerFlowControlMode>('always', 'acknowledged'), fc.array(stepArb, { maxLength: 60 }), (mode, steps) => {
        const config = configFor(mode)
        const clock = createManualClock()
        const log: { call: 'pause' | 'resume'; at: number; inFlight: number }[] = []
        let inFlight = 0
        // The model: engaged from the start in 'always' mode, else from the first ack; a cap
        // (forced resume) forgives the debt and, in 'acknowledged' mode, disengages; so does the
        // last output() iterator leaving a PTY that only iterators acknowledged.
        let engaged = mode === 'always'
        let consumerAcknowledged = false
        let notAcknowledgingReports = 0
        let reportsAllowed = 0
        // The count the controller holds at the moment of each call (checked against ours after each step).
        const held = (): number => flow.state(target).unacknowledgedChars
        const target: ProducerFlowTarget = {
          pause: () => log.push({ call: 'pause', at: clock.now(), inFlight: held() }),
          resume: () => log.push({ call: 'resume', at: clock.now(), inFlight: held() }),
          notAcknowledging: () => {
            notAcknowledgingReports += 1
          },
        }
        const flow = new ProducerFlowControl(config, clock)
        let pausedSince: number | null = null
        for (const generated of steps) {
          const step: Step = generated.kind === 'ackLeaving' ? { kind: 'ack', chars: Math.max(0, inFlight - generated.keep) } : generated
          let before = log.length
          const wasPaused = pausedSince !== null
          if (step.kind === 'output') {
            inFlight += step.chars
            flow.noteOutput(target, step.chars)
          } else if (step.kind === 'ack' || step.kind === 'iteratorAck') {
            const credited = flow.acknowledge(target, step.chars, step.kind === 'iteratorAck')
            expect(credited).toBe(Math.min(step.chars, inFlight))
            inFlight -= credited
            engaged = true
            if (step.kind === 'ack') consumerAcknowledged = true
          } else if (step.kind === 'advance') {
            clock.advance(step.ms)
          } else if (step.kind === 'iteratorsLeft') {
            const disengages = mode === 'acknowledged' && engaged && !consumerAcknowledged
            flow.iteratorsLeft(target)
            if (disengages) {
              // One resume, paused or not: it tells a provider that counts acks itself to stop.
              expect(log.slice(before)).toEqual([{ call: 'resume', at: clock.now(), inFlight: 0 }])
              inFlight = 0
              engaged = false
              pausedSince = null
            } else expect(log.length).toBe(before)
            before = log.length
          } else {
            flow.release(target)
            inFlight = 0
            engaged = mode === 'always'
            consumerAcknowledged = false
            reportsAllowed = notAcknowledgingReports + 1
          }
          for (const entry of log.slice(before)) {
            if (entry.call === 'pause') {
              // A pause (first or re-asserted) only while engaged and above the high watermark.
              expect(engaged).toBe(true)
              expect(entry.inFlight).toBeGreaterThan(config.highWatermarkChars)
              pausedSince ??= entry.at
            } else {
              expect(pausedSince).not.toBeNull()
              const heldFor = entry.at - (pausedSince ?? 0)
              expect(heldFor).toBeLessThanOrEqual(config.pauseMaxHoldMs)
              if (step.kind === 'advance') {
                // Only the cap resumes while time passes: it forgives the debt.
                expect(heldFor).toBe(config.pauseMaxHoldMs)
                expect(entry.inFlight).toBe(0)
                inFlight = 0
                engaged = mode === 'always'
              } else {
                // Resumed below the low watermark, or by a release.
                expect(entry.inFlight < config.lowWatermarkChars || step.kind === 'release').toBe(true)
              }
              pausedSince = null
            }
          }
          const state = flow.state(target)
          expect(state.unacknowledgedChars).toBe(inFlight)
          expect(state.paused).toBe(pausedSince !== null)
          expect(state.engaged).toBe(engaged)
          // And the other way round: output that leaves an engaged PTY above the high watermark
          // pauses its producer (the checks above only judge the pauses that happened, so one never
          // made went unseen). Only output decides a pause: an ack that engages a PTY already above
          // the watermark leaves the pause to its next output.
          if (step.kind === 'output' && engaged && inFlight > config.highWatermarkChars) {
            abovePaused += 1
            expect(state.paused).toBe(true)
          }
          // Likewise a resume: an ack that brings a paused PTY below the low watermark resumes it.
          if ((step.kind === 'ack' || step.kind === 'iteratorAck') && wasPaused && inFlight < config.lowWatermarkChars) {
            belowResumed += 1
            expect(state.paused).toBe(false)
          }
          if (pausedSince !== null) expect(clock.now() - pausedSince).toBeLessThanOrEqual(config.pauseMaxHoldMs)
          // Reported at most once per tracked PTY (a release forgets it).
          expect(notAcknowledgingReports).toBeLessThanOrEqual(Math.max(reportsAllowed, 1))
        }
      }),
      { numRuns: 300 },
    )
    expect(abovePaused).toBeGreaterThan(0)
    expect(belowResumed).toBeGreaterThan(0)
  })

  it('follows a tracked target before its output, changing none of its state, until it is released or forgotten', () => {
    for (const mode of ['acknowledged', 'always'] as const) {
      const flow = new ProducerFlowControl(configFor(mode), createManualClock())
      const calls: string[] = []
      const target = (name: string): ProducerFlowTarget => ({ pause: () => calls.push(`pause ${name}`), resume: () => calls.push(`resume ${name}`) })
      const a = target('a')
      const b = target('b')
      const before = flow.state(a)
      flow.track(a)
      flow.track(a)
      flow.track(b)
      expect(flow.followedCount).toBe(2)
      expect(flow.state(a)).toEqual(before)
      expect(flow.state(a)).toEqual({ unacknowledgedChars: 0, paused: false, engaged: mode === 'always', pausedSince: null })
      flow.noteOutput(a, 10)
      expect(flow.state(a).unacknowledgedChars).toBe(10)
      flow.release(a)
      flow.forget(b)
      expect(flow.followedCount).toBe(0)
      // Neither was paused: nothing was resumed.
      expect(calls).toEqual([])
    }
  })

  it('forgets a target without resuming it', () => {
    const clock = createManualClock()
    const calls: string[] = []
    const target: ProducerFlowTarget = { pause: () => calls.push('pause'), resume: () => calls.push('resume') }
    const flow = new ProducerFlowControl(CONFIG, clock)
    flow.noteOutput(target, 2_000)
    flow.forget(target)
    clock.advance(1_000)
    expect(calls).toEqual(['pause'])
    expect(flow.state(target)).toEqual({ unacknowledgedChars: 0, paused: false, engaged: true, pausedSince: null })
  })

  it("in 'acknowledged' mode never pauses a consumer that has not acknowledged", () => {
    const clock = createManualClock()
    const calls: string[] = []
    const target: ProducerFlowTarget = { pause: () => calls.push('pause'), resume: () => calls.push('resume') }
    const flow = new ProducerFlowControl(configFor('acknowledged'), clock)
    flow.noteOutput(target, 1_000_000)
    expect(calls).toEqual([])
    expect(flow.state(target)).toMatchObject({ engaged: false, paused: false })
    flow.acknowledge(target, 10)
    flow.noteOutput(target, 1)
    expect(calls).toEqual(['pause'])
  })
})
