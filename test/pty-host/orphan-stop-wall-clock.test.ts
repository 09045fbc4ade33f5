// A successor host's stop of a dead predecessor's orphan under a wall clock that jumps (NTP
// stepping it back, a frozen/mocked Date): the escalation HUP → TERM → KILL is counted on the
// timers' clock, not on `Date.now()`. From a process table the test writes (signals recorded).
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ProcessInspector, ProcessStat } from '../../src/node-pty/process-inspector.js'
import { PredecessorOrphans } from '../../src/pty-host/predecessor-orphans.js'
import type { PredecessorJournal } from '../../src/pty-host/session-journal.js'

const SID = 5_000_000
const LEADER_START = 1_000
const realNow = Date.now.bind(Date)

function world() {
  const state = { rows: [{ pid: SID, ppid: 1, pgid: SID, sid: SID, tpgid: -1, state: 'S', name: 'p', startTime: String(LEADER_START) }] as ProcessStat[], signals: [] as string[] }
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
    ticksNow: () => 2_000,
    // Dies of the SIGKILL only (ignores the hang-up and SIGTERM).
    kill: (target: number, signal: string) => {
      state.signals.push(signal)
      if (signal === 'SIGKILL') state.rows = state.rows.filter((r) => r.pgid !== -target)
    },
  }
  const journal: PredecessorJournal = { open: [{ id: 'pty-1', process: { incarnationId: 'inc-1', pid: SID, startTime: String(LEADER_START), pgid: SID, sid: SID } }], unaccounted: false }
  const orphans = new PredecessorOrphans(journal, true, inspector, seams, { hangupGraceMs: 40, terminateGraceMs: 40, shutdownDeadlineMs: 600 })
  return { state, orphans }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('predecessor orphan stop under wall-clock jumps', () => {
  it('a frozen Date: the stop still escalates to SIGKILL on its graces', async () => {
    const { state, orphans } = world()
    vi.spyOn(Date, 'now').mockReturnValue(realNow())
    const started = performance.now()
    const stopping = orphans.stop('inc-1')
    await Promise.race([stopping, new Promise((resolve) => setTimeout(resolve, 2_500))])
    expect(state.signals).toEqual(['SIGHUP', 'SIGTERM', 'SIGKILL'])
    await stopping
    expect(performance.now() - started).toBeLessThan(1_000)
  }, 5_000)

  it('the clock stepped back an hour mid-stop: the escalation does not wait an hour', async () => {
    const { state, orphans } = world()
    const stopping = orphans.stop('inc-1', { deadlineAt: Date.now() + 2_000 })
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000)
    await Promise.race([stopping, new Promise((resolve) => setTimeout(resolve, 2_500))])
    expect(state.signals).toEqual(['SIGHUP', 'SIGTERM', 'SIGKILL'])
    await stopping
  }, 5_000)
})
