import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ProcessInspector, ProcessStat } from '../../src/node-pty/process-inspector.js'
import { exitKillTargets, groupsOf, hasLiveChildren, indexProcessTable, readForegroundProcess, selectSessionProcesses } from '../../src/node-pty/process-tree.js'
import { isDeadState } from './pty-test-support.js'

const row = (pid: number, ppid: number, pgid: number, sid: number | null, extra: Partial<ProcessStat> = {}): ProcessStat => ({
  pid,
  ppid,
  pgid,
  sid,
  tpgid: -1,
  state: 'S',
  name: `p${pid}`,
  ...extra,
})

/** An inspector over a fixed table. */
function tableInspector(table: ProcessStat[]): ProcessInspector {
  return {
    kind: 'procfs',
    read: (pid) => Promise.resolve(table.find((r) => r.pid === pid) ?? null),
    list: () => Promise.resolve(table),
    cwd: (pid) => Promise.resolve(`/cwd/${pid}`),
    readNow: (pid) => table.find((r) => r.pid === pid) ?? 'absent',
    isGone: (pid) => !table.some((r) => r.pid === pid && r.state !== 'Z'),
    isReaped: (pid) => !table.some((r) => r.pid === pid),
  }
}

describe('selectSessionProcesses', () => {
  // host (1000) spawned the leader (200); the leader's session holds a foreground job (201, its
  // group), a background job in its own group (300, 301), a zombie (302), a setsid'd child (400,
  // own session, parent 200) and its child (401); 500 is unrelated.
  const table = [
    row(1, 0, 1, 1),
    row(1000, 1, 1000, 1000),
    row(200, 1000, 200, 200),
    row(201, 200, 200, 200),
    row(300, 200, 300, 200),
    row(301, 300, 300, 200),
    row(302, 200, 302, 200, { state: 'Z' }),
    row(400, 200, 400, 400),
    row(401, 400, 400, 400),
    row(500, 1, 500, 500),
  ]

  it('finds the session, the groups and the descendants, and nothing else', () => {
    expect(selectSessionProcesses(table, 200, 1000)).toEqual([200, 201, 300, 301, 400, 401])
    expect(groupsOf(table, selectSessionProcesses(table, 200, 1000))).toEqual([200, 300, 400])
  })

  it('still finds the session after the leader is gone (its members keep the session id)', () => {
    const orphaned = table.filter((r) => r.pid !== 200).map((r) => (r.ppid === 200 ? { ...r, ppid: 1 } : r))
    expect(selectSessionProcesses(orphaned, 200, 1000)).toEqual([201, 300, 301])
  })

  it('selects nothing through the leader’s pid once another process has reused it', () => {
    // The leader (pid 200, started at tick 5000) was reaped; pid 200 now belongs to an unrelated
    // process that made itself a session and group leader, with a child of its own. The kernel
    // never hands out a pid still in use as a session or group id, so nothing in this table can
    // belong to the old session.
    const reused = [
      row(1, 0, 1, 1),
      row(200, 1, 200, 200, { startTime: '9000' }),
      row(210, 200, 200, 200, { startTime: '9001' }),
      row(500, 1, 500, 500),
    ]
    expect(selectSessionProcesses(reused, 200, 1000, '5000')).toEqual([])
    // Read with that process's own start time, the same table is its session.
    expect(selectSessionProcesses(reused, 200, 1000, '9000')).toEqual([200, 210])
    // No start time known (macOS ps): the old behaviour.
    expect(selectSessionProcesses(reused, 200, 1000, null)).toEqual([200, 210])
    // No start time learnt because the leader was already reaped at the stop's first look: a live
    // process at its pid in a later table is someone else's.
    expect(selectSessionProcesses(reused, 200, 1000, null, true)).toEqual([])
  })

  it('a leader reaped before its start time was learnt: its session’s survivors are still selected', () => {
    // The leader (200) is gone and its pid free; its background job (300, 301) kept the session
    // id 200 in use, so the kernel cannot have handed 200 out again.
    const survivors = [row(1, 0, 1, 1), row(300, 1, 300, 200), row(301, 300, 300, 200), row(500, 1, 500, 500)]
    expect(selectSessionProcesses(survivors, 200, 1000, null, true)).toEqual([300, 301])
    // The leader still a zombie (not reaped): its children and session are its own.
    const zombie = [...survivors, row(200, 1000, 200, 200, { state: 'Z' }), row(250, 200, 200, 200)]
    expect(selectSessionProcesses(zombie, 200, 1000, null, true)).toEqual([250, 300, 301])
  })

  it('P-tree-1: never selects pid 0/1, the caller, or a dead process (a zombie, or one being reaped); always selects every live session member', () => {
    // X rows reach the selection only after the inspector read them twice (process-inspector.ts).
    const tables = fc.uniqueArray(
      fc.record({
        pid: fc.integer({ min: 0, max: 40 }),
        ppid: fc.integer({ min: 0, max: 40 }),
        pgid: fc.integer({ min: 0, max: 40 }),
        sid: fc.option(fc.integer({ min: 0, max: 40 }), { nil: null }),
        tpgid: fc.constant(-1),
        state: fc.constantFrom('S', 'R', 'Z', 'X'),
        name: fc.constant('x'),
      }),
      { selector: (r) => r.pid, maxLength: 30 },
    )
    fc.assert(
      fc.property(tables, fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), (rows, leader, self) => {
        const chosen = selectSessionProcesses(rows, leader, self)
        for (const pid of chosen) {
          expect(pid).toBeGreaterThan(1)
          expect(pid).not.toBe(self)
          expect(isDeadState(rows.find((r) => r.pid === pid)?.state ?? '')).toBe(false)
        }
        for (const r of rows) {
          if (r.sid === leader && r.pid > 1 && r.pid !== self && !isDeadState(r.state)) expect(chosen).toContain(r.pid)
        }
      }),
    )
  })
})

describe('exitKillTargets (killOnProcessExit)', () => {
  // The host (1000, group 1000) spawned the leader (200, started at tick 5000); its session holds a
  // background job in a group of its own (300, 301) and a setsid'd child (400, 401).
  const table = [
    row(1, 0, 1, 1),
    row(1000, 1, 1000, 1000),
    row(200, 1000, 200, 200, { startTime: '5000' }),
    row(300, 200, 300, 200),
    row(301, 300, 300, 200),
    row(400, 200, 400, 400),
    row(401, 400, 400, 400),
    row(500, 1, 500, 500),
  ]
  const live = { pid: 200, leaderStartTime: '5000', leaderGone: false }

  it('signals every group of the PTY once, never the host\'s own group, and the leader by pid only when it left its group', () => {
    expect(exitKillTargets(indexProcessTable(table), live, 1000, 1000).sort((a, b) => a - b)).toEqual([-400, -300, -200])
    // A job the host's own group holds (it joined the host's group): never the host's group.
    const joined = [...table, row(302, 200, 1000, 200)]
    expect(exitKillTargets(indexProcessTable(joined), live, 1000, 1000)).not.toContain(-1000)
    // A leader that moved to another process group of its own session: signalled by its pid too.
    const moved = table.map((r) => (r.pid === 200 ? { ...r, pgid: 300 } : r))
    expect(exitKillTargets(indexProcessTable(moved), live, 1000, 1000).sort((a, b) => a - b)).toEqual([-400, -300])
    const movedAway = table.map((r) => (r.pid === 200 ? { ...r, pgid: 1000 } : r))
    expect(exitKillTargets(indexProcessTable(movedAway), live, 1000, 1000)).toContain(200)
  })

  it('a leader known gone whose pid another process now holds names nothing of the PTY: that process and its children are spared', () => {
    // The leader was reaped before its start time was learnt, and nothing of its session is left
    // (else the kernel would not hand its pid out again): pid 200 is an unrelated session leader.
    const reused = [
      ...table.filter((r) => ![200, 300, 301, 400, 401].includes(r.pid)),
      row(200, 1, 200, 200, { startTime: '9000', name: 'unrelated' }),
      row(210, 200, 200, 200, { name: 'unrelated-child' }),
    ]
    const gone = { pid: 200, leaderStartTime: null, leaderGone: true }
    expect(exitKillTargets(indexProcessTable(reused), gone, 1000, 1000)).toEqual([])
    // With the start time learnt, the same table is recognised as someone else's.
    expect(exitKillTargets(indexProcessTable(reused), { ...live, leaderGone: true }, 1000, 1000)).toEqual([])
  })

  it('a leader gone, its pid free: the members its session still has are signalled', () => {
    const orphaned = table.filter((r) => r.pid !== 200).map((r) => (r.ppid === 200 ? { ...r, ppid: 1 } : r))
    expect(exitKillTargets(indexProcessTable(orphaned), { pid: 200, leaderStartTime: null, leaderGone: true }, 1000, 1000)).toEqual([-300])
  })
})

describe('readForegroundProcess and hasLiveChildren', () => {
  it('answers the foreground group leader, or the leader when there is no foreground job', async () => {
    const inspector = tableInspector([row(200, 1, 200, 200, { tpgid: 300 }), row(300, 200, 300, 200, { name: 'vim' })])
    expect((await readForegroundProcess(inspector, 200))?.name).toBe('vim')
    const idle = tableInspector([row(200, 1, 200, 200, { tpgid: 200, name: 'bash' })])
    expect((await readForegroundProcess(idle, 200))?.name).toBe('bash')
    expect(await readForegroundProcess(idle, 999)).toBeNull()
  })

  it('falls back to a live member when the foreground group leader is gone', async () => {
    const inspector = tableInspector([row(200, 1, 200, 200, { tpgid: 300 }), row(301, 200, 300, 200, { name: 'less' })])
    expect((await readForegroundProcess(inspector, 200))?.name).toBe('less')
  })

  it('counts live children only', async () => {
    expect(await hasLiveChildren(tableInspector([row(200, 1, 200, 200), row(201, 200, 200, 200, { state: 'Z' })]), 200)).toBe(false)
    expect(await hasLiveChildren(tableInspector([row(200, 1, 200, 200), row(201, 200, 200, 200)]), 200)).toBe(true)
    const none: ProcessInspector = { ...tableInspector([]), list: () => Promise.resolve(null) }
    expect(await hasLiveChildren(none, 200)).toBeNull()
  })
})
