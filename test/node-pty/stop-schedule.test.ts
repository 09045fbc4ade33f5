import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  NODE_PTY_HANGUP_GRACE_MS,
  NODE_PTY_KILL_RESERVE_MS,
  NODE_PTY_SHUTDOWN_DEADLINE_MS,
  NODE_PTY_TERMINATE_GRACE_MS,
  planStopSchedule,
} from '../../src/node-pty/stop-schedule.js'

const options = fc.record({
  immediate: fc.boolean(),
  deadlineAfterMs: fc.nat({ max: 20_000 }),
  hangupGraceMs: fc.nat({ max: 5_000 }),
  terminateGraceMs: fc.nat({ max: 5_000 }),
  killReserveMs: fc.nat({ max: 1_000 }),
})

describe('planStopSchedule', () => {
  it('P-stop-1: starts at 0, strictly increases, ends with the only SIGKILL', () => {
    fc.assert(
      fc.property(options, (o) => {
        const steps = planStopSchedule(o)
        expect(steps[0]?.atMs).toBe(0)
        for (let i = 1; i < steps.length; i += 1) expect(steps[i]!.atMs).toBeGreaterThan(steps[i - 1]!.atMs)
        expect(steps.at(-1)?.signal).toBe('SIGKILL')
        expect(steps.filter((s) => s.signal === 'SIGKILL')).toHaveLength(1)
      }),
    )
  })

  it('P-stop-2: the KILL leaves the reserve before the deadline whenever the deadline allows it', () => {
    fc.assert(
      fc.property(options, (o) => {
        const kill = planStopSchedule(o).at(-1)!
        expect(kill.atMs).toBeLessThanOrEqual(Math.max(0, o.deadlineAfterMs - o.killReserveMs))
      }),
    )
  })

  it('P-stop-3: immediate is a single SIGKILL at once', () => {
    fc.assert(
      fc.property(options, (o) => {
        expect(planStopSchedule({ ...o, immediate: true })).toEqual([{ signal: 'SIGKILL', atMs: 0 }])
      }),
    )
  })

  it('P-stop-4: signals keep their order HUP < TERM < KILL, and with room for it the full escalation runs on its graces', () => {
    fc.assert(
      fc.property(options, (o) => {
        const order = planStopSchedule({ ...o, immediate: false }).map((s) => s.signal)
        expect(['SIGHUP,SIGTERM,SIGKILL', 'SIGHUP,SIGKILL', 'SIGKILL']).toContain(order.join(','))
        fc.pre(o.hangupGraceMs > 0 && o.terminateGraceMs > 0 && o.deadlineAfterMs >= o.hangupGraceMs + o.terminateGraceMs + o.killReserveMs)
        expect(planStopSchedule({ ...o, immediate: false })).toEqual([
          { signal: 'SIGHUP', atMs: 0 },
          { signal: 'SIGTERM', atMs: o.hangupGraceMs },
          { signal: 'SIGKILL', atMs: o.hangupGraceMs + o.terminateGraceMs },
        ])
      }),
    )
  })

  it('the defaults give HUP, TERM after the hang-up grace, KILL after the terminate grace', () => {
    expect(
      planStopSchedule({
        immediate: false,
        deadlineAfterMs: NODE_PTY_SHUTDOWN_DEADLINE_MS,
        hangupGraceMs: NODE_PTY_HANGUP_GRACE_MS,
        terminateGraceMs: NODE_PTY_TERMINATE_GRACE_MS,
        killReserveMs: NODE_PTY_KILL_RESERVE_MS,
      }),
    ).toEqual([
      { signal: 'SIGHUP', atMs: 0 },
      { signal: 'SIGTERM', atMs: NODE_PTY_HANGUP_GRACE_MS },
      { signal: 'SIGKILL', atMs: NODE_PTY_HANGUP_GRACE_MS + NODE_PTY_TERMINATE_GRACE_MS },
    ])
  })

  it('a deadline shorter than the reserve goes straight to KILL', () => {
    expect(
      planStopSchedule({ immediate: false, deadlineAfterMs: 100, hangupGraceMs: 500, terminateGraceMs: 500, killReserveMs: 250 }),
    ).toEqual([{ signal: 'SIGKILL', atMs: 0 }])
  })
})
