/**
 * Child process of the spawn-blocking figure: grows its JS heap to a target with ballast, then
 * alternates raw node-pty and ptykit spawns of `sh -c 'exit 0'`, and for each one records the
 * longest stretch the event loop was blocked between the spawn call and the exit event.
 *
 * forkpty() copies the calling process (page tables included) on the JS thread, so the block grows
 * with the host's memory; this is why the ballast lives in this child and not in the bench.
 *
 * Two kinds of ballast, because they fork very differently:
 * - `heap`: JS arrays on the V8 heap (V8 maps its heap so that the kernel can back it with
 *   transparent huge pages, which makes the page tables fork copies small);
 * - `buffer`: a filled `Buffer` off the heap (malloc'd 4 KiB pages, as in the reference baseline).
 *
 * Usage: spawn-blocking-child.ts <heap|buffer> <ballastTargetBytes> <pairs> [pty-host]
 * With `pty-host`, the ptykit side is a controller over the pty host provider (the fork happens
 * in the host process, so the app's heap should no longer matter).
 */
import { alternate, type PairedSamples } from '../alternate.js'
import { createPtyHostSide } from '../pty-host-side.js'
import { createPtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { nowMs } from '../stats.js'

/**
 * Elements per ballast array: ~2 MiB of heap each (V8 stores `fill(0.5)` at 16 B per element), so
 * the heap lands within a few MiB of its target and 1 GiB takes ~500 quick steps.
 */
export const BALLAST_ARRAY_LENGTH = 1 << 17

/** Stop adding ballast once the heap is this close to its target (one array's worth). */
export const BALLAST_STEP_BYTES = BALLAST_ARRAY_LENGTH * 16

/** What the child prints. */
export type SpawnBlockingChildResult = {
  /** The ballast kind. */
  kind: 'heap' | 'buffer'
  /** The ballast target, bytes. */
  heapTarget: number
  /** heapUsed right after the ballast, before any spawn, bytes. */
  heapUsed: number
  /** RSS right after the ballast, before any spawn, bytes. */
  rss: number
  /** Longest event-loop block per spawn, ms, paired raw / ptykit. */
  stalls: PairedSamples
  /** How long the spawn call itself took before returning, ms. */
  syncCallMs: { raw: number[]; ptykit: number[] }
  /**
   * Per spawn, the most CPU time (user + system, ms) the process used within one probe gap: the
   * longest task the app itself ran. Unlike `stalls` it does not grow when a loaded machine
   * deschedules the app (process-wide, so V8's helper threads count: an upper bound).
   */
  busyMs: { raw: number[]; ptykit: number[] }
}

/**
 * An event-loop probe: a `setImmediate` chain that records the longest gap between two turns
 * (wall clock), and the most CPU time the process used within one gap (`busy`: the app's own
 * longest task, which descheduling on a loaded machine does not inflate). Finer than
 * `monitorEventLoopDelay` (whose resolution is 1 ms+) for a ~1 ms forkpty.
 */
function startProbe(): { stop(): { stall: number; busy: number } } {
  const cpuMs = (): number => {
    const usage = process.cpuUsage()
    return (usage.user + usage.system) / 1000
  }
  let last = nowMs()
  let lastCpu = cpuMs()
  let longest = 0
  let busiest = 0
  let running = true
  const sample = (): void => {
    const now = nowMs()
    const cpu = cpuMs()
    longest = Math.max(longest, now - last)
    busiest = Math.max(busiest, cpu - lastCpu)
    last = now
    lastCpu = cpu
  }
  const turn = (): void => {
    sample()
    if (running) setImmediate(turn)
  }
  setImmediate(turn)
  return {
    stop: () => {
      running = false
      sample()
      return { stall: longest, busy: busiest }
    },
  }
}

const ballast: unknown[] = []

async function main(): Promise<void> {
  const kind = process.argv[2]
  const heapTarget = Number(process.argv[3])
  const pairs = Number(process.argv[4])
  if (kind !== 'heap' && kind !== 'buffer') throw new TypeError(`Expected the kind argument to be heap or buffer, got ${String(kind)}`)
  if (kind === 'heap') {
    while (process.memoryUsage().heapUsed + BALLAST_STEP_BYTES / 2 <= heapTarget) {
      ballast.push(new Array<number>(BALLAST_ARRAY_LENGTH).fill(0.5))
    }
  } else {
    ballast.push(Buffer.alloc(heapTarget, 1))
  }
  const afterBallast = process.memoryUsage()
  const side = process.argv[5] === 'pty-host' ? createPtyHostSide() : createPtykitSide()
  const syncCallMs = { raw: [] as number[], ptykit: [] as number[] }
  const busyMs = { raw: [] as number[], ptykit: [] as number[] }
  const FILE = '/bin/sh'
  const ARGS = ['-c', 'exit 0']
  const stalls = await alternate({
    pairs,
    raw: async () => {
      const probe = startProbe()
      await new Promise((resolve) => setImmediate(resolve))
      const t0 = nowMs()
      const p = pty.spawn(FILE, ARGS, rawSpawnOptions())
      syncCallMs.raw.push(nowMs() - t0)
      await rawExit(p)
      const { stall, busy } = probe.stop()
      busyMs.raw.push(busy)
      return stall
    },
    ptykit: async () => {
      const probe = startProbe()
      await new Promise((resolve) => setImmediate(resolve))
      const t0 = nowMs()
      const spawning = side.controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
      syncCallMs.ptykit.push(nowMs() - t0)
      const handle = await spawning
      await side.tracker.get(handle.id).exited
      side.tracker.forget(handle.id)
      const { stall, busy } = probe.stop()
      busyMs.ptykit.push(busy)
      return stall
    },
  })
  await side.dispose()
  syncCallMs.raw.shift()
  syncCallMs.ptykit.shift() // the warm-up pair
  busyMs.raw.shift()
  busyMs.ptykit.shift()
  const result: SpawnBlockingChildResult = { kind, heapTarget, heapUsed: afterBallast.heapUsed, rss: afterBallast.rss, stalls, syncCallMs, busyMs }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
