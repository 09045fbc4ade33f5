/**
 * Finding the processes of a mass-stop run in `/proc`: every PTY the run spawns carries an
 * environment marker (`PTYKIT_BENCH_MARK=<random>`), inherited by its whole tree, so survivors are
 * found by reading `/proc/<pid>/environ` — whatever their session, group or parent — and the
 * benchmark can kill every one of them even when the measuring child crashed.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Most PTYs a mass-stop phase spawns at once (a burst of 1 000 would only measure the fork queue). */
export const SPAWN_CONCURRENCY = 50

/** The environment variable every process of a mass-stop run carries. */
export const MARK_VARIABLE = 'PTYKIT_BENCH_MARK'

/** A fresh marker value for one run. */
export function newMark(): string {
  return `mass-stop-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 10)}`
}

/** The pids of live (non-zombie) processes whose environment holds `MARK_VARIABLE=mark`. */
export function markedProcesses(mark: string): number[] {
  const needle = `${MARK_VARIABLE}=${mark}`
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1')
      if (!environ.split('\0').includes(needle)) continue
      // A zombie is dead (only its exit status is left for the parent to reap).
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1')
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
      if (state !== 'Z' && state !== 'X') found.push(Number(entry))
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found
}

/** SIGKILLs every marked process; returns how many were found. Never throws. */
export function killMarkedProcesses(mark: string): number {
  const pids = markedProcesses(mark)
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
  return pids.length
}
