import type { ProcessInspector, ProcessStat } from './process-inspector.js'

/**
 * The process whose name and directory describe what a PTY is doing: the leader of the terminal's
 * foreground process group (`tpgid`, what `tcgetpgrp` answers), or the PTY's own leader when there
 * is no foreground group or its leader has gone. `null` when the leader itself cannot be read.
 */
export async function readForegroundProcess(inspector: ProcessInspector, leaderPid: number): Promise<ProcessStat | null> {
  const leader = await inspector.read(leaderPid)
  if (leader === null) return null
  const tpgid = leader.tpgid
  if (tpgid === null || tpgid <= 0 || tpgid === leaderPid) return leader
  const foreground = await inspector.read(tpgid)
  if (foreground !== null && foreground.state !== 'Z') return foreground
  // Why: a group outlives its leader; any live member names the job as well.
  const table = await inspector.list()
  const member = table?.find((row) => row.pgid === tpgid && row.state !== 'Z')
  return member ?? leader
}

/**
 * Whether the leader has a child that is still running (zombies excluded: they are finished).
 * `null` when the platform cannot list processes.
 */
export async function hasLiveChildren(inspector: ProcessInspector, leaderPid: number): Promise<boolean | null> {
  const table = await inspector.list()
  if (table === null) return null
  return table.some((row) => row.ppid === leaderPid && row.state !== 'Z')
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
 * pid leads to can then belong to the PTY, and nothing is selected.
 */
export function selectSessionProcesses(
  table: readonly ProcessStat[],
  leaderPid: number,
  selfPid: number,
  leaderStartTime?: string | null,
): number[] {
  if (leaderStartTime !== undefined && leaderStartTime !== null) {
    const holder = table.find((row) => row.pid === leaderPid)
    if (holder?.startTime !== undefined && holder.startTime !== leaderStartTime) return []
  }
  const chosen = new Set<number>()
  const childrenOf = new Map<number, ProcessStat[]>()
  for (const row of table) {
    const siblings = childrenOf.get(row.ppid)
    if (siblings === undefined) childrenOf.set(row.ppid, [row])
    else siblings.push(row)
    if (row.sid === leaderPid || row.pgid === leaderPid || row.pid === leaderPid) chosen.add(row.pid)
  }
  const queue = [leaderPid]
  const visited = new Set<number>()
  while (queue.length > 0) {
    const pid = queue.pop() as number
    if (visited.has(pid)) continue
    visited.add(pid)
    for (const child of childrenOf.get(pid) ?? []) {
      chosen.add(child.pid)
      queue.push(child.pid)
    }
  }
  const zombies = new Set(table.filter((row) => row.state === 'Z').map((row) => row.pid))
  return [...chosen].filter((pid) => pid > 1 && pid !== selfPid && !zombies.has(pid)).sort((a, b) => a - b)
}

/** The process groups of a set of processes (each group is signalled once, as a whole). */
export function groupsOf(table: readonly ProcessStat[], pids: readonly number[]): number[] {
  const wanted = new Set(pids)
  const groups = new Set<number>()
  for (const row of table) if (wanted.has(row.pid) && row.pgid > 1) groups.add(row.pgid)
  return [...groups].sort((a, b) => a - b)
}
