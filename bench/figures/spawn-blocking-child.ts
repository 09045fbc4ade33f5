/**
 * Child process of the spawn-blocking figure: grows its JS heap to a target with ballast, then
 * alternates raw node-pty and ptykit spawns of `sh -c 'exit 0'`, and for each one records, between
 * the spawn call and the exit event, the longest event-loop gap and how much of the longest task
 * the app's main thread itself ran (schedstat; the judged sample).
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
import { alternate, pairedSamples, type PairedSamples } from '../alternate.js'
import { createPtyHostSide } from '../pty-host-side.js'
import { createPtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { nowMs } from '../stats.js'
import { closeProbe, PROBE_READS_SCHEDSTAT, startProbe, type ProbeReading } from './spawn-blocking-probe.js'

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
   * Per spawn, the most CPU time (user + system, ms) the whole process used within one probe gap:
   * process-wide, so V8's helper threads count — an upper bound of the app's own task (`ownMs`).
   */
  busyMs: { raw: number[]; ptykit: number[] }
  /**
   * Per spawn, the most time the app's main thread ran on a CPU within one probe gap (Linux
   * schedstat): the app's own longest task, which a loaded machine does not inflate, ms.
   */
  ownMs: PairedSamples
  /** Per spawn, within the longest gap: how long the app's thread ran on a CPU, ms. */
  ranInLongestMs: { raw: number[]; ptykit: number[] }
  /** Per spawn, within the longest gap: how long the app's thread waited runnable for a CPU, ms. */
  waitedInLongestMs: { raw: number[]; ptykit: number[] }
  /** Whether the probe read the thread's schedstat (false: `ownMs` is the wall-clock gap). */
  readsSchedstat: boolean
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
  const throughPtyHost = process.argv[5] === 'pty-host'
  const side = throughPtyHost ? createPtyHostSide() : createPtykitSide()
  const syncCallMs = { raw: [] as number[], ptykit: [] as number[] }
  const busyMs = { raw: [] as number[], ptykit: [] as number[] }
  const ownMs: PairedSamples = { raw: [], ptykit: [], ratios: [], differences: [] }
  const ranInLongestMs = { raw: [] as number[], ptykit: [] as number[] }
  const waitedInLongestMs = { raw: [] as number[], ptykit: [] as number[] }
  const record = (side: 'raw' | 'ptykit', reading: ProbeReading): number => {
    busyMs[side].push(reading.busy)
    ownMs[side].push(reading.own)
    ranInLongestMs[side].push(reading.ranInLongest)
    waitedInLongestMs[side].push(reading.waitedInLongest)
    return reading.stall
  }
  const FILE = '/bin/sh'
  const ARGS = ['-c', 'exit 0']
  let lastSide: 'raw' | 'ptykit' | null = null
  const spawnAndWait = async (): Promise<void> => {
    const handle = await side.controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
    await side.tracker.get(handle.id).exited
    side.tracker.forget(handle.id)
  }
  const stalls = await alternate({
    pairs,
    raw: async () => {
      lastSide = 'raw'
      const probe = startProbe()
      await new Promise((resolve) => setImmediate(resolve))
      const t0 = nowMs()
      const p = pty.spawn(FILE, ARGS, rawSpawnOptions())
      syncCallMs.raw.push(nowMs() - t0)
      await rawExit(p)
      return record('raw', probe.stop())
    },
    ptykit: async () => {
      // Through the pty host, the app never forks: a raw sample's in-process fork right before
      // leaves this process's pages, TLB and caches to be refaulted by whatever runs next (measured
      // 2 Dec, 40 MiB heap: own longest task of the first pty-host spawn after a raw fork 0.41 ms
      // median, of the next seven 0.22–0.26 ms; 1 GiB: 0.54 vs 0.23–0.30 ms). That is the raw
      // side's cost, so one unmeasured pty-host spawn absorbs it before the measured one.
      if (throughPtyHost && lastSide === 'raw') await spawnAndWait()
      lastSide = 'ptykit'
      const probe = startProbe()
      await new Promise((resolve) => setImmediate(resolve))
      const t0 = nowMs()
      const spawning = side.controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
      syncCallMs.ptykit.push(nowMs() - t0)
      const handle = await spawning
      await side.tracker.get(handle.id).exited
      side.tracker.forget(handle.id)
      return record('ptykit', probe.stop())
    },
  })
  await side.dispose()
  syncCallMs.raw.shift()
  syncCallMs.ptykit.shift() // the warm-up pair
  closeProbe()
  for (const samples of [busyMs, ownMs, ranInLongestMs, waitedInLongestMs]) {
    samples.raw.shift()
    samples.ptykit.shift()
  }
  Object.assign(ownMs, pairedSamples(ownMs.ptykit, ownMs.raw))
  const result: SpawnBlockingChildResult = {
    kind,
    heapTarget,
    heapUsed: afterBallast.heapUsed,
    rss: afterBallast.rss,
    stalls,
    syncCallMs,
    busyMs,
    ownMs,
    ranInLongestMs,
    waitedInLongestMs,
    readsSchedstat: PROBE_READS_SCHEDSTAT,
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
