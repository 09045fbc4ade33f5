import type { PtyForegroundProcessEvidence } from '../contracts/index.js'
import { isDefunct, type ProcessInspector, type ProcessStat } from './process-inspector.js'

/**
 * The interval between the two reads that confirm a PTY's foreground. Long enough that a process
 * in the middle of exiting (or a group being handed back to the shell) shows up as a change, short
 * enough for a host to ask before typing into a terminal.
 */
export const NODE_PTY_FOREGROUND_CONFIRM_INTERVAL_MS = 30

type ForegroundReading = { tpgid: number; process: ProcessStat }

/**
 * One reading from the kernel: the tty's foreground process group (`tpgid` in the leader's
 * `/proc/<pid>/stat`, what `tcgetpgrp` answers) and the live process leading it (or, when its
 * leader has gone, a live member of the group). `null` when there is none to read.
 */
async function readForegroundGroup(inspector: ProcessInspector, leaderPid: number): Promise<ForegroundReading | null> {
  const leader = await inspector.read(leaderPid)
  if (leader === null || isDefunct(leader)) return null
  const tpgid = leader.tpgid
  if (tpgid === null || tpgid <= 0) return null
  if (tpgid === leaderPid) return { tpgid, process: leader }
  const foreground = await inspector.read(tpgid)
  if (foreground !== null && !isDefunct(foreground) && foreground.pgid === tpgid) return { tpgid, process: foreground }
  const table = await inspector.list()
  const member = table?.find((row) => row.pgid === tpgid && !isDefunct(row))
  return member === undefined ? null : { tpgid, process: member }
}

function sameReading(a: ForegroundReading, b: ForegroundReading): boolean {
  return (
    a.tpgid === b.tpgid &&
    a.process.pid === b.process.pid &&
    a.process.name === b.process.name &&
    a.process.startTime === b.process.startTime
  )
}

/**
 * The PTY's confirmed foreground: the foreground group read twice, `intervalMs` apart, must be the
 * same group led by the same process (pid, name and start time). `null` on any change or gap —
 * never a guess. `shellForeground` is true when the group is the leader's own.
 */
export async function confirmForegroundProcess(
  inspector: ProcessInspector,
  leaderPid: number,
  intervalMs: number = NODE_PTY_FOREGROUND_CONFIRM_INTERVAL_MS,
): Promise<PtyForegroundProcessEvidence | null> {
  if (inspector.kind === 'none') return null
  const first = await readForegroundGroup(inspector, leaderPid)
  if (first === null) return null
  await new Promise<void>((resolve) => setTimeout(resolve, intervalMs))
  const second = await readForegroundGroup(inspector, leaderPid)
  if (second === null || !sameReading(first, second)) return null
  return { foregroundProcess: second.process.name, shellForeground: second.tpgid === leaderPid }
}
