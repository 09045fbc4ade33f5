/**
 * The event-loop probe of the spawn-blocking figures: a `setImmediate` chain that measures the
 * longest gap between two turns of the app's event loop, and what that gap is made of.
 *
 * A spinning probe keeps the app's thread runnable all the time, so on a loaded machine (or while
 * the pty host and the forked child want the CPU) the scheduler preempts it, and a gap grows by the
 * time the thread sat in the run queue: that is the machine's load, not the app's work. Linux
 * counts that time per thread (`/proc/self/task/<tid>/schedstat`, second field: nanoseconds spent
 * runnable but waiting for a CPU, updated each time the thread gets a CPU back), so the probe
 * splits each gap into the time the thread waited for a CPU and the rest — the app's own task
 * (JS, GC on the main thread, syscalls such as the fork of an in-process spawn, page faults).
 */
import { closeSync, openSync, readSync } from 'node:fs'
import { nowMs } from '../stats.js'

/** What one probe saw between its start and its stop. */
export type ProbeReading = {
  /** The longest gap between two turns (wall clock), ms. */
  stall: number
  /** Within the gap that gave `stall`: the time the app's thread ran on a CPU, ms. */
  ranInLongest: number
  /** Within the gap that gave `stall`: the time the app's thread waited runnable for a CPU, ms. */
  waitedInLongest: number
  /**
   * The most on-CPU time of the app's main thread within one gap, ms: the app's own longest task
   * (JS, main-thread GC, syscalls such as an in-process fork), which neither a loaded machine nor
   * V8's helper threads inflate.
   */
  own: number
  /** Most process CPU time (user + system, every thread) used within one gap, ms (an upper bound of `own`). */
  busy: number
}

/** The main thread's schedstat file (its tid is the pid), or `null` where Linux does not provide it. */
function openSchedstat(): number | null {
  try {
    return openSync(`/proc/self/task/${process.pid}/schedstat`, 'r')
  } catch {
    return null
  }
}

const schedstatFd = openSchedstat()
const schedstatBuffer = Buffer.alloc(128)
/** The main thread's [on-CPU, run-queue wait] times in ms, filled by {@link readSchedstat}. */
const schedstat = [0, 0]

/**
 * Reads the main thread's on-CPU and run-queue-wait nanoseconds (first two fields) into
 * {@link schedstat}, without allocating. Call it right after `process.cpuUsage()`: the kernel
 * brings a running thread's on-CPU time up to date only when asked for the process's CPU time.
 */
function readSchedstat(): void {
  if (schedstatFd === null) return
  const length = readSync(schedstatFd, schedstatBuffer, 0, schedstatBuffer.length, 0)
  let field = 0
  let value = 0
  for (let i = 0; i < length && field < 2; i++) {
    const byte = schedstatBuffer[i]!
    if (byte === 0x20) {
      schedstat[field++] = value / 1e6
      value = 0
    } else {
      value = value * 10 + (byte - 0x30)
    }
  }
}

/** Whether the probe can see the app's thread's own CPU and run-queue time (Linux schedstat). */
export const PROBE_READS_SCHEDSTAT = schedstatFd !== null

/** Closes the schedstat file (at the end of a child). */
export function closeProbe(): void {
  if (schedstatFd !== null) closeSync(schedstatFd)
}

/** Starts a probe; `stop()` ends it and returns what it saw. */
export function startProbe(): { stop(): ProbeReading } {
  let last = 0
  let lastCpu = 0
  let lastRan = 0
  let lastWaited = 0
  const reading: ProbeReading = { stall: 0, ranInLongest: 0, waitedInLongest: 0, own: 0, busy: 0 }
  let running = true
  const sample = (first: boolean): void => {
    const now = nowMs()
    const usage = process.cpuUsage()
    readSchedstat()
    const cpu = (usage.user + usage.system) / 1000
    const [ran, waited] = schedstat as [number, number]
    if (!first) {
      const gap = now - last
      if (gap > reading.stall) {
        reading.stall = gap
        reading.ranInLongest = ran - lastRan
        reading.waitedInLongest = waited - lastWaited
      }
      reading.own = Math.max(reading.own, PROBE_READS_SCHEDSTAT ? ran - lastRan : gap)
      reading.busy = Math.max(reading.busy, cpu - lastCpu)
    }
    last = now
    lastCpu = cpu
    lastRan = ran
    lastWaited = waited
  }
  sample(true)
  const turn = (): void => {
    sample(false)
    if (running) setImmediate(turn)
  }
  setImmediate(turn)
  return {
    stop: () => {
      running = false
      sample(false)
      return reading
    },
  }
}
