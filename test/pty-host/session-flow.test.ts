import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PTY_HOST_ACK_HIGH_WATERMARK_CHARS, PTY_HOST_ACK_LOW_WATERMARK_CHARS, SessionFlow, type SessionFlowTimers } from '../../src/pty-host/session-flow.js'

const HOLD_MS = 10_000

/** Timers fired by hand: one pending call per handle, and the delay each was asked for. */
function manualTimers() {
  const pending = new Map<number, { run: () => void; ms: number }>()
  let next = 0
  const timers: SessionFlowTimers = {
    schedule(run, ms) {
      pending.set(++next, { run, ms })
      return next
    },
    cancel(handle) {
      pending.delete(handle as number)
    },
  }
  return { timers, pending }
}

type Op =
  | { kind: 'sent'; who: number; chars: number }
  | { kind: 'ack'; who: number; chars: number }
  | { kind: 'pause' | 'resume' | 'leave' | 'holdExpires'; who: number }

const who = fc.integer({ min: 0, max: 2 })
const chars = fc.integer({ min: 0, max: PTY_HOST_ACK_HIGH_WATERMARK_CHARS })
// Often a whole window at once, so pauses (and their holds running out) are common.
const sentChars = fc.oneof(chars, fc.constant(PTY_HOST_ACK_HIGH_WATERMARK_CHARS))
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('sent' as const), who, chars: sentChars }),
  fc.record({ kind: fc.constant('ack' as const), who, chars }),
  fc.record({ kind: fc.constant('holdExpires' as const), who }),
  fc.record({ kind: fc.constantFrom('pause' as const, 'resume' as const, 'leave' as const), who }),
)

describe('SessionFlow (the host’s per-session pause state)', () => {
  it('pauses exactly while some subscriber paused or owes more than the high watermark (until it drops below the low one, a resume, or the longest hold), and calls pause/resume only on a change', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60, size: 'max' }), (ops) => {
        const calls: ('pause' | 'resume')[] = []
        const { timers, pending } = manualTimers()
        const flow = new SessionFlow(
          () => calls.push('pause'),
          () => calls.push('resume'),
          HOLD_MS,
          timers,
        )
        const subscribers = [{}, {}, {}]
        // The model: per subscriber, the same rules written plainly; `hold` is the timer of its
        // acknowledgement pause (the flow schedules one per pause it starts).
        const model = subscribers.map(() => ({ present: false, appPaused: false, acking: false, unacked: 0, ackPaused: false, hold: undefined as number | undefined }))
        const scheduled = (): number[] => [...pending.keys()]
        for (const step of ops) {
          const before = scheduled()
          const s = model[step.who]!
          const subscriber = subscribers[step.who]!
          if (step.kind === 'sent') {
            flow.noteSent(subscriber, step.chars)
            if (s.present && s.acking) {
              s.unacked += step.chars
              if (!s.ackPaused && s.unacked > PTY_HOST_ACK_HIGH_WATERMARK_CHARS) {
                s.ackPaused = true
                // A new pause: exactly one new timer, for the longest hold.
                const added = scheduled().filter((handle) => !before.includes(handle))
                expect(added).toHaveLength(1)
                expect(pending.get(added[0]!)?.ms).toBe(HOLD_MS)
                s.hold = added[0]
              }
            }
          } else if (step.kind === 'ack') {
            flow.acknowledge(subscriber, step.chars)
            s.present = true
            s.acking = true
            s.unacked = Math.max(0, s.unacked - step.chars)
            if (s.unacked < PTY_HOST_ACK_LOW_WATERMARK_CHARS) Object.assign(s, { ackPaused: false, hold: undefined })
          } else if (step.kind === 'leave') {
            flow.remove(subscriber)
            Object.assign(s, { present: false, appPaused: false, acking: false, unacked: 0, ackPaused: false, hold: undefined })
          } else if (step.kind === 'holdExpires') {
            // The longest hold of this subscriber's pause passes: forgiven, and no longer counted.
            if (s.hold !== undefined) {
              pending.get(s.hold)!.run()
              pending.delete(s.hold)
              Object.assign(s, { acking: false, unacked: 0, ackPaused: false, hold: undefined })
            }
          } else {
            flow.setAppPaused(subscriber, step.kind === 'pause')
            s.present = true
            s.appPaused = step.kind === 'pause'
            if (step.kind === 'resume') Object.assign(s, { acking: false, unacked: 0, ackPaused: false, hold: undefined })
          }
          const expected = model.some((m) => m.present && (m.appPaused || m.ackPaused))
          expect(flow.paused).toBe(expected)
          expect(flow.unacknowledged(subscriber)).toBe(s.present ? s.unacked : 0)
          // A timer is pending exactly for each held acknowledgement pause (none left behind).
          expect(scheduled().sort()).toEqual(model.flatMap((m) => (m.hold === undefined ? [] : [m.hold])).sort())
        }
        // Calls alternate, starting with a pause, and end in the current state.
        calls.forEach((call, index) => expect(call).toBe(index % 2 === 0 ? 'pause' : 'resume'))
        expect(calls.length % 2 === 1).toBe(flow.paused)
      }),
    )
  })
})
