/**
 * Where a process's CPU goes, from `/proc` (for `bench/pty-host-cpu.ts`: the host's CPU time, and
 * with `--host-detail`): user and system time, minor page faults, and CPU by thread name (`main`,
 * the event loop's thread; the rest by their names: libuv's pool, V8's workers (named as the
 * process is), …). A JS CPU profile sees only the main thread's JS; these see the rest (syscalls in
 * the kernel, other threads, faults), and none of them depend on the machine's load.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { median } from './stats.js'

const CLOCK_TICKS_PER_MS = 100 / 1000

/** A process's counters (ms of CPU, faults), absolute or as the difference of two reads. */
export type ProcessDetail = { userMs: number; systemMs: number; minorFaults: number; threadMs: Map<string, number> }

function statFields(path: string): { name: string; fields: string[] } | null {
  let stat: string
  try {
    stat = readFileSync(path, 'utf8')
  } catch {
    return null // A thread that ended between the listing and the read.
  }
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') }
}

/** CPU time (user + system, all threads) `pid` has used so far, in ms, from `/proc/<pid>/stat`. */
export function processCpuMs(pid: number): number {
  const stat = statFields(`/proc/${pid}/stat`)
  if (stat === null) throw new Error(`No process ${pid}`)
  return (Number(stat.fields[11]) + Number(stat.fields[12])) / CLOCK_TICKS_PER_MS
}

/** Read the counters of `pid` (`'self'`: this process). Threads of the same name are summed (e.g. the four `V8 Worker`s). */
export function processDetail(pid: number | 'self'): ProcessDetail {
  const whole = statFields(`/proc/${pid}/stat`)
  if (whole === null) throw new Error(`No process ${pid}`)
  const threadMs = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const thread = statFields(`/proc/${pid}/task/${tid}/stat`)
    if (thread === null) continue
    // Node names only some threads (libuv's pool, node-pty's); V8's workers share the main thread's name.
    const name = tid === String(pid === 'self' ? process.pid : pid) ? 'main' : thread.name.replace(/\d+$/, '#')
    const ms = (Number(thread.fields[11]) + Number(thread.fields[12])) / CLOCK_TICKS_PER_MS
    threadMs.set(name, (threadMs.get(name) ?? 0) + ms)
  }
  return {
    userMs: Number(whole.fields[11]) / CLOCK_TICKS_PER_MS,
    systemMs: Number(whole.fields[12]) / CLOCK_TICKS_PER_MS,
    minorFaults: Number(whole.fields[7]),
    threadMs,
  }
}

/** `after - before`. */
export function subtractDetail(after: ProcessDetail, before: ProcessDetail): ProcessDetail {
  const threadMs = new Map<string, number>()
  for (const [name, ms] of after.threadMs) threadMs.set(name, ms - (before.threadMs.get(name) ?? 0))
  return { userMs: after.userMs - before.userMs, systemMs: after.systemMs - before.systemMs, minorFaults: after.minorFaults - before.minorFaults, threadMs }
}

/** Print the medians per MB of `details` (floods of `megabytes` MB each). */
export function reportDetail(label: string, details: readonly ProcessDetail[], megabytes: number): void {
  if (details.length === 0) return
  const perMb = (pick: (detail: ProcessDetail) => number): string => (median(details.map(pick)) / megabytes).toFixed(2)
  const names = new Set(details.flatMap((detail) => [...detail.threadMs.keys()]))
  const threads = [...names]
    .map((name) => ({ name, ms: median(details.map((detail) => detail.threadMs.get(name) ?? 0)) / megabytes }))
    .filter((thread) => thread.ms > 0)
    .sort((a, b) => b.ms - a.ms)
    .map((thread) => `${thread.name} ${thread.ms.toFixed(2)}`)
  console.log(`${label}: user ${perMb((d) => d.userMs)} ms/MB  system ${perMb((d) => d.systemMs)} ms/MB  minor faults ${perMb((d) => d.minorFaults)}/MB  threads (ms/MB): ${threads.join(', ')}`)
}
