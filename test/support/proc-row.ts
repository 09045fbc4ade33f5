import { readFileSync, readdirSync } from 'node:fs'

// Kept apart from test/node-pty/pty-test-support.ts (which imports vitest) so that scripts run
// outside vitest — test/pty-host/fixtures/forced-pid-reuse.ts, in a pid namespace of its own —
// read processes the same way.

/** One line of /proc/<pid>/stat, read independently of the code under test (`startTime`: field 22). */
export type ProcRow = { pid: number; state: string; ppid: number; pgid: number; sid: number; startTime: string }

/** /proc/<pid>/stat as a row; `null` when the process does not exist. */
export function procRow(pid: number): ProcRow | null {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const [state, ppid, pgid, sid] = fields
  return { pid, state: state ?? '?', ppid: Number(ppid), pgid: Number(pgid), sid: Number(sid), startTime: fields[19] ?? '' }
}

/**
 * Whether a /proc state letter is a dead process's: a zombie (`Z`), or one its parent is reaping
 * right now (`X`; `x` on older kernels), whose stat still reads until its pid is freed.
 */
export function isDeadState(state: string): boolean {
  return state === 'Z' || state === 'X' || state === 'x'
}

/** The live (not dead: {@link isDeadState}) pids of session `sid` now (from `/proc`). */
export function sessionMembers(sid: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const row = procRow(Number(entry))
    if (row !== null && row.sid === sid && !isDeadState(row.state)) members.push(row.pid)
  }
  return members
}

/** SIGKILL every live member of session `sid` now (a test's clean-up; one gone meanwhile is skipped). */
export function killSessionMembers(sid: number): void {
  for (const pid of sessionMembers(sid)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Gone meanwhile.
    }
  }
}
