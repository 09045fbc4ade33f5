import { isDefunct, scanProcNow, type ProcessInspector, type ProcessStat } from './process-inspector.js'

/**
 * The process whose name and directory describe what a PTY is doing: the leader of the terminal's
 * foreground process group (`tpgid`, what `tcgetpgrp` answers), or the PTY's own leader when there
 * is no foreground group or its leader has gone. `null` when the leader itself cannot be read.
 */
export async function readForegroundProcess(inspector: ProcessInspector, leaderPid: number): Promise<ProcessStat | null> {
  const leader = await inspector.read(leaderPid)
  return leader === null ? null : foregroundOfLeader(inspector, leader)
}

/** {@link readForegroundProcess} for a leader already read. */
export async function foregroundOfLeader(inspector: ProcessInspector, leader: ProcessStat): Promise<ProcessStat> {
  const tpgid = leader.tpgid
  if (tpgid === null || tpgid <= 0 || tpgid === leader.pid) return leader
  const foreground = await inspector.read(tpgid)
  if (foreground !== null && !isDefunct(foreground)) return foreground
  // Why: a group outlives its leader; any live member names the job as well.
  const table = await inspector.list()
  const member = table?.find((row) => row.pgid === tpgid && !isDefunct(row))
  return member ?? leader
}

/**
 * Whether the leader has a child that is still running (zombies excluded: they are finished).
 * `null` when the platform cannot list processes.
 */
export async function hasLiveChildren(inspector: ProcessInspector, leaderPid: number): Promise<boolean | null> {
  const table = await inspector.list()
  if (table === null) return null
  return table.some((row) => row.ppid === leaderPid && !isDefunct(row))
}

/**
 * Every process that belongs to a PTY's leader and should die with it, found in one table:
 * members of the leader's session (an interactive shell's background jobs get process groups of
 * their own, but stay in its session), members of its process group, and its descendants by
 * parentage (which also catches a child that called `setsid`, while its parent is alive).
 * Never includes pid 0/1 or the calling process. Zombies are left out (they are already dead).
 *
 * `leaderStartTime` (when known) guards against pid reuse: if the table's process with the
 * leader's pid started at another time, the leader was reaped and its pid handed to an unrelated
 * process. The kernel never hands out a pid still in use as a session or group id, so nothing the
 * pid leads to can then belong to the PTY, and nothing is selected. When the start time was never
 * learnt because the leader was already reaped at the first look (`leaderReapedUnknown`), a live
 * process at its pid in a table read after that look is such an unrelated process too.
 */
export function selectSessionProcesses(
  table: readonly ProcessStat[] | ProcessTableIndex,
  leaderPid: number,
  selfPid: number,
  leaderStartTime?: string | null,
  leaderReapedUnknown = false,
): number[] {
  const index = isProcessTableIndex(table) ? table : indexProcessTable(table)
  const holder = index.byPid.get(leaderPid)
  if (leaderStartTime !== undefined && leaderStartTime !== null) {
    if (holder?.startTime !== undefined && holder.startTime !== leaderStartTime) return []
  } else if (leaderReapedUnknown && holder !== undefined && !isDefunct(holder)) {
    return []
  }
  const chosen = new Set<number>()
  for (const row of index.bySid.get(leaderPid) ?? []) chosen.add(row.pid)
  for (const row of index.byPgid.get(leaderPid) ?? []) chosen.add(row.pid)
  if (index.byPid.has(leaderPid)) chosen.add(leaderPid)
  const queue = [leaderPid]
  const visited = new Set<number>()
  while (queue.length > 0) {
    const pid = queue.pop() as number
    if (visited.has(pid)) continue
    visited.add(pid)
    for (const child of index.childrenOf.get(pid) ?? []) {
      chosen.add(child.pid)
      queue.push(child.pid)
    }
  }
  return [...chosen]
    .filter((pid) => {
      const row = index.byPid.get(pid)
      return pid > 1 && pid !== selfPid && (row === undefined || !isDefunct(row))
    })
    .sort((a, b) => a - b)
}

/**
 * A process table indexed once, so that many stops can each pick their session out of one
 * `/proc` pass in time proportional to the session, not to the table.
 */
export type ProcessTableIndex = {
  /** Each row by pid. */
  readonly byPid: ReadonlyMap<number, ProcessStat>
  /** Rows by session id. */
  readonly bySid: ReadonlyMap<number, ProcessStat[]>
  /** Rows by process group id. */
  readonly byPgid: ReadonlyMap<number, ProcessStat[]>
  /** Rows by parent pid. */
  readonly childrenOf: ReadonlyMap<number, ProcessStat[]>
}

function isProcessTableIndex(value: readonly ProcessStat[] | ProcessTableIndex): value is ProcessTableIndex {
  return !Array.isArray(value)
}

function push(map: Map<number, ProcessStat[]>, key: number | null, row: ProcessStat): void {
  if (key === null) return
  const list = map.get(key)
  if (list === undefined) map.set(key, [row])
  else list.push(row)
}

/** Index a process table by pid, session, group and parent (one pass). */
export function indexProcessTable(table: readonly ProcessStat[]): ProcessTableIndex {
  const byPid = new Map<number, ProcessStat>()
  const bySid = new Map<number, ProcessStat[]>()
  const byPgid = new Map<number, ProcessStat[]>()
  const childrenOf = new Map<number, ProcessStat[]>()
  for (const row of table) {
    byPid.set(row.pid, row)
    push(bySid, row.sid, row)
    push(byPgid, row.pgid, row)
    push(childrenOf, row.ppid, row)
  }
  return { byPid, bySid, byPgid, childrenOf }
}

/** The process groups of a set of processes (each group is signalled once, as a whole). */
export function groupsOf(table: readonly ProcessStat[] | ProcessTableIndex, pids: readonly number[]): number[] {
  const index = isProcessTableIndex(table) ? table : indexProcessTable(table)
  const groups = new Set<number>()
  for (const pid of pids) {
    const row = index.byPid.get(pid)
    if (row !== undefined && row.pgid > 1) groups.add(row.pgid)
  }
  return [...groups].sort((a, b) => a - b)
}

/**
 * What `killOnProcessExit` signals for one PTY, from one table read as the host process ends: each
 * process group of the processes {@link selectSessionProcesses} picks (as negative pids), except
 * the host's own group, and the leader by its pid only when it left those groups. A leader known
 * gone whose pid a live process holds now names nothing of the PTY: the kernel hands a pid out
 * again only once no process has it as a session or group id, so that process and its children
 * are someone else's (as a leader whose learnt start time differs).
 */
export function exitKillTargets(
  index: ProcessTableIndex,
  leader: { readonly pid: number; readonly leaderStartTime: string | null; readonly leaderGone: boolean },
  selfPid: number,
  selfGroup: number | undefined,
): number[] {
  const members = selectSessionProcesses(index, leader.pid, selfPid, leader.leaderStartTime, leader.leaderGone)
  const targets = new Set<number>()
  for (const group of groupsOf(index, members)) if (group !== selfGroup) targets.add(-group)
  // Why not the leader's pid as well, always: a second kill(2) per PTY doubled the time this
  // takes (~0.2 s for 1 000 PTYs), for a leader its group's signal reaches already.
  const row = index.byPid.get(leader.pid)
  if (row !== undefined && members.includes(leader.pid) && !targets.has(-row.pgid)) targets.add(leader.pid)
  return [...targets]
}

/** A PTY's leader as a synchronous kill names it: its pid, start time (`null`: unknown) and whether its exit was heard. */
export type KilledLeader = { readonly pid: number; readonly leaderStartTime: string | null; readonly leaderGone: boolean }

/**
 * SIGKILL, synchronously, every process still left of each leader's PTY: the leader's process group
 * and, when `sweepSession`, found in one synchronous `/proc` pass, every group of its session and
 * its descendants ({@link exitKillTargets}; without a table, the group of a leader not known gone).
 * Returns, per leader, whether it was killed alive: a signal went out while the table showed the
 * leader running as itself (its start time, when known; not a zombie) — without a table, its exit
 * not heard. The one kill of `killOnProcessExit` and of `dispose()` at its deadline (the node-pty
 * provider's, which a closing pty host's provider is).
 *
 * @param kill - the signal call (`process.kill`; a test passes a recorder)
 */
export function sigkillLeadersNow(
  leaders: Iterable<KilledLeader>,
  inspector: ProcessInspector,
  sweepSession: boolean,
  kill: (target: number, signal: NodeJS.Signals) => void = (target, signal) => void process.kill(target, signal),
): boolean[] {
  // Every row that can be read (one another user's `hidepid` hides is not ours to kill anyway).
  const table = sweepSession ? scanProcNow(inspector, true) : null
  const index = table === null ? null : indexProcessTable(table)
  const selfGroup = index?.byPid.get(process.pid)?.pgid
  const killedAlive: boolean[] = []
  for (const leader of leaders) {
    const targets = index === null ? (leader.leaderGone ? [] : [-leader.pid, leader.pid]) : exitKillTargets(index, leader, process.pid, selfGroup)
    const row = index?.byPid.get(leader.pid)
    const alive = index === null ? !leader.leaderGone : row !== undefined && !isDefunct(row) && !leader.leaderGone && (leader.leaderStartTime === null || row.startTime === leader.leaderStartTime)
    let delivered = 0
    for (const target of targets) {
      try {
        kill(target, 'SIGKILL')
        delivered += 1
      } catch {
        // Gone already, or not ours to signal: the process is ending either way.
      }
    }
    killedAlive.push(alive && delivered > 0)
  }
  return killedAlive
}
