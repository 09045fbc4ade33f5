import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PTY_HOST_ACK_HIGH_WATERMARK_CHARS, PTY_HOST_ACK_LOW_WATERMARK_CHARS, SessionFlow } from '../../src/pty-host/session-flow.js'

type Op =
  | { kind: 'sent'; who: number; chars: number }
  | { kind: 'ack'; who: number; chars: number }
  | { kind: 'pause' | 'resume' | 'leave'; who: number }

const who = fc.integer({ min: 0, max: 2 })
const chars = fc.integer({ min: 0, max: PTY_HOST_ACK_HIGH_WATERMARK_CHARS })
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('sent' as const), who, chars }),
  fc.record({ kind: fc.constant('ack' as const), who, chars }),
  fc.record({ kind: fc.constantFrom('pause' as const, 'resume' as const, 'leave' as const), who }),
)

describe('SessionFlow (the host’s per-session pause state)', () => {
  it('pauses exactly while some subscriber paused or owes more than the high watermark (until it drops below the low one), and calls pause/resume only on a change', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const calls: ('pause' | 'resume')[] = []
        const flow = new SessionFlow(
          () => calls.push('pause'),
          () => calls.push('resume'),
        )
        const subscribers = [{}, {}, {}]
        // The model: per subscriber, the same rules written plainly.
        const model = subscribers.map(() => ({ present: false, appPaused: false, acking: false, unacked: 0, ackPaused: false }))
        for (const step of ops) {
          const s = model[step.who]!
          const subscriber = subscribers[step.who]!
          if (step.kind === 'sent') {
            flow.noteSent(subscriber, step.chars)
            if (s.present && s.acking) {
              s.unacked += step.chars
              if (s.unacked > PTY_HOST_ACK_HIGH_WATERMARK_CHARS) s.ackPaused = true
            }
          } else if (step.kind === 'ack') {
            flow.acknowledge(subscriber, step.chars)
            s.present = true
            s.acking = true
            s.unacked = Math.max(0, s.unacked - step.chars)
            if (s.unacked < PTY_HOST_ACK_LOW_WATERMARK_CHARS) s.ackPaused = false
          } else if (step.kind === 'leave') {
            flow.remove(subscriber)
            Object.assign(s, { present: false, appPaused: false, acking: false, unacked: 0, ackPaused: false })
          } else {
            flow.setAppPaused(subscriber, step.kind === 'pause')
            s.present = true
            s.appPaused = step.kind === 'pause'
            if (step.kind === 'resume') Object.assign(s, { acking: false, unacked: 0, ackPaused: false })
          }
          const expected = model.some((m) => m.present && (m.appPaused || m.ackPaused))
          expect(flow.paused).toBe(expected)
          expect(flow.unacknowledged(subscriber)).toBe(s.present ? s.unacked : 0)
        }
        // Calls alternate, starting with a pause, and end in the current state.
        calls.forEach((call, index) => expect(call).toBe(index % 2 === 0 ? 'pause' : 'resume'))
        expect(calls.length % 2 === 1).toBe(flow.paused)
      }),
    )
  })
})
