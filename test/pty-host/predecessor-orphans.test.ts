/**
 * Who belongs to a dead host's session, and what a successor may say and signal about it — from a
 * process table the test writes (no process is signalled: the signals are recorded).
 *
 * The rule: a pid number is not handed out again while any process uses it as its pid, group or
 * session id. While a process known to be the session's is alive, every process with its session
 * id is its; once none known is alive, one with that id may be a new session's that reused the
 * number — never signalled, and the session then neither proven running nor proven ended.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { NODE_PTY_HANGUP_GRACE_MS, NODE_PTY_SHUTDOWN_DEADLINE_MS } from '../../src/node-pty/index.js'
import { scanProcNow, type ProcessInspector, type ProcessStat } from '../../src/node-pty/process-inspector.js'
import { PredecessorOrphans } from '../../src/pty-host/predecessor-orphans.js'
import type { JournalProcess, PredecessorJournal } from '../../src/pty-host/session-journal.js'

/**
 * The session's id (its leader's pid; the others near it), above any pid_max (2^22): should a
 * signal escape the recorded ones, it reaches no process.
 */
const SID = 5_000_000
const LEADER_START = 1_000

function row(pid: number, startTime: number, sid = SID, pgid = sid): ProcessStat {
  return { pid, ppid: 1, pgid, sid, tpgid: -1, state: 'S', name: 'p', startTime: String(startTime) }
}

/** A process table, a clock and a signal log the orphans see; SIGKILL removes a group's rows. */
function world(rows: ProcessStat[], now: number) {
  const state = { rows, now, signals: [] as [number, string][] }
  const inspector: ProcessInspector = {
    kind: 'procfs',
    read: async (pid) => state.rows.find((r) => r.pid === pid) ?? null,
    list: async () => [...state.rows],
    cwd: async () => null,
    readNow: (pid) => state.rows.find((r) => r.pid === pid) ?? 'absent',
    isGone: () => false,
    isReaped: () => false,
  }
  const seams = {
    scanNow: () => [...state.rows],
    ticksNow: () => state.now,
    kill: (target: number, signal: string) => {
      state.signals.push([target, signal])
      if (signal === 'SIGKILL') state.rows = state.rows.filter((r) => r.pgid !== -target)
    },
  }
  return { state, inspector, seams }
}

/** `'resolved'`, or the code of the error a stop rejected with. */
const outcomeOf = (stopping: Promise<void>): Promise<string> =>
  stopping.then(
    () => 'resolved',
    (error: { code?: string }) => String(error.code),
  )

/** A table read is shared by the calls of one turn: the next one reads it again. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

function journalOf(process: Partial<JournalProcess> = {}): PredecessorJournal {
  return { open: [{ id: 'pty-1', process: { incarnationId: 'inc-1', pid: SID, startTime: String(LEADER_START), pgid: SID, sid: SID, ...process } }], unaccounted: false }
}

describe('a dead host’s session: membership by the session id', () => {
  it('the leader runs at the successor’s start: its members are known; once the leader is gone they still prove the session running, and a stop signals only them', async () => {
    const { state, inspector, seams } = world([row(SID, LEADER_START), row(5_000_001, 1_500, SID, 5_000_001)], 2_000)
    const orphans = new PredecessorOrphans(journalOf(), true, inspector, seams)
    expect(orphans.probeIncarnation('inc-1')).toBe(true)
    // The leader dies of the hang-up; its `nohup` job (own group) runs on.
    state.rows = state.rows.filter((r) => r.pid !== SID)
    state.now = 3_000
    await nextTurn()
    expect(orphans.probeIncarnation('inc-1')).toBe(true)
    expect(orphans.probeId('pty-1')).toBe(true)
    await orphans.stop('inc-1', { immediate: true, deadlineAt: Date.now() + 2_000 })
    expect(state.signals).toEqual([[-5_000_001, 'SIGKILL']])
    expect(orphans.probeIncarnation('inc-1')).toBe(false)
  })

  it('D3: the session ended unseen and a new session took its number: nothing with the id is signalled, the stop is refused as unverified, the probe is unknown', async () => {
    const { state, inspector, seams } = world([row(SID, LEADER_START)], 2_000)
    const orphans = new PredecessorOrphans(journalOf(), true, inspector, seams)
    expect(orphans.probeIncarnation('inc-1')).toBe(true)
    // The orphan ends; later its number is a new session's id, whose leader exited leaving a child.
    state.rows = [row(5_000_100, 5_000, SID, SID)]
    state.now = 6_000
    await nextTurn()
    expect(orphans.probeIncarnation('inc-1')).toBeNull()
    expect(orphans.probeId('pty-1')).toBeNull()
    expect(orphans.runningUnder('pty-1')).toEqual(['inc-1'])
    expect(orphans.unsettled).toBe(true)
    await expect(orphans.stop('inc-1', { immediate: true, deadlineAt: Date.now() + 2_000 })).rejects.toMatchObject({ code: 'shutdown_timeout', message: expect.stringContaining('cannot be proven its') })
    await expect(orphans.stop('inc-1', { deadlineAt: Date.now() + 2_000 })).rejects.toMatchObject({ code: 'shutdown_timeout' })
    await orphans.stopAll({ deadlineAt: Date.now() + 2_000 })
    expect(state.signals).toEqual([])
    // Once nothing has the id, it is proven ended.
    state.rows = []
    await nextTurn()
    expect(orphans.probeIncarnation('inc-1')).toBe(false)
  })

  it('D3: a new process at the leader’s pid (another start time) proves the session ended: what has the id is the new one’s, never signalled', async () => {
    const { state, inspector, seams } = world([row(SID, LEADER_START)], 2_000)
    const orphans = new PredecessorOrphans(journalOf(), true, inspector, seams)
    state.rows = [row(SID, 5_000), row(5_000_101, 5_100)]
    await nextTurn()
    expect(orphans.probeIncarnation('inc-1')).toBe(false)
    await orphans.stop('inc-1', { immediate: true })
    expect(state.signals).toEqual([])
  })

  it('D2: the leader gone at the successor’s start, a process with its id started after the journal’s `at`: not proven ended — unknown, and its stop refused without a signal', async () => {
    const { state, inspector, seams } = world([row(5_000_001, 1_500, SID, 5_000_001)], 9_000)
    const orphans = new PredecessorOrphans(journalOf({ heldAt: 1_200 }), true, inspector, seams)
    expect(orphans.probeIncarnation('inc-1')).toBeNull()
    expect(orphans.probeId('pty-1')).toBeNull()
    expect(orphans.carried().open).toEqual([expect.objectContaining({ id: 'pty-1' })])
    await expect(orphans.stop('inc-1', { deadlineAt: Date.now() + 1_000 })).rejects.toMatchObject({ code: 'shutdown_timeout' })
    expect(state.signals).toEqual([])
  })

  it('D2: … started before the journal’s `at` (the session held its number then): a member — running, and stopped', async () => {
    const { state, inspector, seams } = world([row(5_000_001, 1_100, SID, 5_000_001), row(5_000_002, 1_800, SID, 5_000_001)], 9_000)
    const orphans = new PredecessorOrphans(journalOf({ heldAt: 1_200 }), true, inspector, seams)
    // The first proves the number held now, so the second (started later) is the session's too.
    expect(orphans.probeIncarnation('inc-1')).toBe(true)
    await orphans.stop('inc-1', { immediate: true, deadlineAt: Date.now() + 2_000 })
    expect(state.signals).toEqual([[-5_000_001, 'SIGKILL']])
    expect(orphans.probeIncarnation('inc-1')).toBe(false)
  })

  // On the timers' clock, faked and moved by hand: what is proven is which graces and deadline the
  // stop waited for, whatever a loaded machine does to the real one (a 430 ms stall once broke the
  // real-clock version's "under 500 ms").
  it("is stopped on the host's own graces and default deadline when given (startPtyHost's nodePty), not node-pty's", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] })
    try {
      const timings = { hangupGraceMs: 40, terminateGraceMs: 40, shutdownDeadlineMs: 600 }
      // Dies of the SIGKILL only (it ignores the hang-up and SIGTERM): its stop escalates on the graces.
      const dying = world([row(SID, LEADER_START)], 2_000)
      const stopped = new PredecessorOrphans(journalOf(), true, dying.inspector, dying.seams, timings)
      const stopping = outcomeOf(stopped.stop('inc-1'))
      const signals = (): string[] => dying.state.signals.map(([, signal]) => signal)
      await vi.advanceTimersByTimeAsync(30)
      expect(signals()).toEqual(['SIGHUP'])
      await vi.advanceTimersByTimeAsync(40)
      expect(signals()).toEqual(['SIGHUP', 'SIGTERM'])
      // Within node-pty's hang-up grace (500 ms), all three signals, and the stop is done.
      await vi.advanceTimersByTimeAsync(NODE_PTY_HANGUP_GRACE_MS - 70 - 1)
      expect(signals()).toEqual(['SIGHUP', 'SIGTERM', 'SIGKILL'])
      expect(await stopping).toBe('resolved')
      // Survives even the SIGKILL (a process stuck in the kernel): refused at the host's 600 ms
      // deadline, which its welcome names and an app waits for — not node-pty's 5 s.
      const stuck = world([row(SID, LEADER_START)], 2_000)
      const survivor = new PredecessorOrphans(journalOf(), true, stuck.inspector, { ...stuck.seams, kill: (target, signal) => void stuck.state.signals.push([target, signal]) }, timings)
      const refused = outcomeOf(survivor.stop('inc-1'))
      await vi.advanceTimersByTimeAsync(550)
      expect(await Promise.race([refused, 'pending'])).toBe('pending')
      await vi.advanceTimersByTimeAsync(NODE_PTY_SHUTDOWN_DEADLINE_MS - 1_000 - 550)
      expect(await Promise.race([refused, 'pending'])).toBe('shutdown_timeout')
    } finally {
      vi.useRealTimers()
    }
  })

  it('a start time within a tick of the `at` is not proven before it (the clocks round down)', () => {
    const { inspector, seams } = world([row(5_000_001, 1_199, SID, 5_000_001)], 9_000)
    const orphans = new PredecessorOrphans(journalOf({ heldAt: 1_200 }), true, inspector, seams)
    expect(orphans.probeIncarnation('inc-1')).toBeNull()
  })

  it('only the leader gone and no process with its session or group id is proven ended (dropped at the start)', () => {
    const { inspector, seams } = world([row(5_000_500, 1_500, 5_000_500, 5_000_500)], 9_000)
    const orphans = new PredecessorOrphans(journalOf(), true, inspector, seams)
    expect(orphans.probeIncarnation('inc-1')).toBeUndefined()
    expect(orphans.unsettled).toBe(false)
  })

  it('D5: a leader that runs (pid, start time) in another session than recorded is not that session: unknown, never signalled', async () => {
    const { state, inspector, seams } = world([row(SID, LEADER_START, 4_999_999, 4_999_999), row(4_999_999, 900, 4_999_999, 4_999_999)], 2_000)
    const orphans = new PredecessorOrphans(journalOf(), true, inspector, seams)
    expect(orphans.probeIncarnation('inc-1')).toBeUndefined()
    expect(orphans.mayHoldUnnamed('pty-1')).toBe(true)
    expect(orphans.unsettled).toBe(true)
    await orphans.stopAll()
    expect(state.signals).toEqual([])
  })

  it('carries the latest time it saw the session hold its number into its own journal', () => {
    const { inspector, seams } = world([row(SID, LEADER_START)], 2_000)
    const orphans = new PredecessorOrphans(journalOf({ heldAt: 1_200 }), true, inspector, seams)
    expect(orphans.carried().open[0]?.process?.heldAt).toBe(2_000)
  })

  // Found by review (helper-127): the group id proved membership too, but `setpgid` can put a
  // process of another session into a group that reused the number.
  it('a process of another session in a group that reused the number (setpgid) is never a member: not true, never signalled', async () => {
    // The session ended unseen; its number went to P (session Y), which made group SID and exited;
    // an old process R of session Y (started before the journal's `at`) had joined group SID.
    const Y = 4_000_000
    const { state, inspector, seams } = world([row(Y, 500, Y, Y), row(4_000_010, 1_100, Y, SID)], 9_000)
    const orphans = new PredecessorOrphans(journalOf({ heldAt: 1_200 }), true, inspector, seams)
    expect(orphans.probeIncarnation('inc-1')).not.toBe(true)
    await nextTurn()
    await expect(orphans.stop('inc-1', { immediate: true, deadlineAt: Date.now() + 300 })).rejects.toMatchObject({ code: 'shutdown_timeout' })
    expect(state.signals).toEqual([])
    expect(orphans.carried().open[0]?.process?.heldAt).toBe(1_200)
  })

  it('a table with a row it could not read proves nothing absent (a running member left out would read as ended)', () => {
    const unreadable: ProcessInspector = { ...world([], 0).inspector, readNow: (pid) => (pid === process.pid ? null : 'absent') }
    expect(scanProcNow(unreadable)).toBeNull()
    // For choosing what to signal (the exit kill), the rows that could be read are kept.
    const table = scanProcNow({ ...unreadable, readNow: (pid) => (pid === process.pid ? null : { pid, ppid: 1, pgid: pid, sid: pid, tpgid: -1, state: 'S', name: 'p' }) }, true)
    expect(table?.length).toBeGreaterThan(0)
    expect(table?.some((row) => row.pid === process.pid)).toBe(false)
    const readable: ProcessInspector = { ...world([], 0).inspector, readNow: () => 'absent' }
    expect(scanProcNow(readable)).toEqual([])
    // And a null table leaves the session unknown, its entry kept.
    const orphans = new PredecessorOrphans(journalOf({ heldAt: 1_600 }), true, world([], 3_000).inspector, { ...world([], 3_000).seams, scanNow: () => null })
    expect(orphans.hasIncarnation('inc-1')).toBe(true)
    expect(orphans.probeIncarnation('inc-1')).toBeNull()
  })
})

// A successor's stop under a wall clock that jumps (NTP stepping it back, a frozen or mocked Date):
// the escalation HUP → TERM → KILL is counted on the timers' clock, not on `Date.now()`.
describe('a predecessor orphan\'s stop under wall-clock jumps', () => {
  const realNow = Date.now.bind(Date)
  afterEach(() => {
    vi.restoreAllMocks()
  })
  /** The orphan's leader dies of the SIGKILL only (as every process of `world`). */
  function orphanThatNeedsKill() {
    const { state, inspector, seams } = world([row(SID, LEADER_START)], 2_000)
    const orphans = new PredecessorOrphans(journalOf(), true, inspector, seams, { hangupGraceMs: 40, terminateGraceMs: 40, shutdownDeadlineMs: 600 })
    return { signals: () => state.signals.map(([, signal]) => signal), orphans }
  }

  it('a frozen Date: the stop still escalates to SIGKILL on its graces', async () => {
    const { signals, orphans } = orphanThatNeedsKill()
    vi.spyOn(Date, 'now').mockReturnValue(realNow())
    const started = performance.now()
    const stopping = orphans.stop('inc-1')
    await Promise.race([stopping, new Promise((resolve) => setTimeout(resolve, 2_500))])
    expect(signals()).toEqual(['SIGHUP', 'SIGTERM', 'SIGKILL'])
    await stopping
    expect(performance.now() - started).toBeLessThan(1_000)
  }, 5_000)

  it('the clock stepped back an hour mid-stop: the escalation does not wait an hour', async () => {
    const { signals, orphans } = orphanThatNeedsKill()
    const stopping = orphans.stop('inc-1', { deadlineAt: Date.now() + 2_000 })
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000)
    await Promise.race([stopping, new Promise((resolve) => setTimeout(resolve, 2_500))])
    expect(signals()).toEqual(['SIGHUP', 'SIGTERM', 'SIGKILL'])
    await stopping
  }, 5_000)
})
