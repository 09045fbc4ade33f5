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
 * Usage: spawn-blocking-child.ts <heap|buffer> <ballastTargetBytes> <pairs> [ptykit|pty-host|raw]
 * - `ptykit` (default): raw node-pty and a controller over the in-process node-pty provider,
 *   alternating in this one process;
 * - `pty-host`: only spawns through a controller over the pty host provider (the fork happens in
 *   the host process, so the app's heap should no longer matter), and `raw`: only raw node-pty
 *   spawns. The pty-host rows run these two in two children with the same ballast: an app on the
 *   pty host never forks, and an in-process fork slows whatever the process runs next (it
 *   write-protects the parent's pages and flushes its TLB: measured 2 Dec at 40 MiB, the own
 *   longest task of the first pty-host spawn after a raw fork 0.41–0.64 ms, of the next ones
 *   0.25–0.33 ms), so raw samples in the same process would be judged into the pty host's figure.
 *   The skipped side's samples are `NaN` and its lists empty.
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
  const mode = process.argv[5] ?? 'ptykit'
  if (mode !== 'ptykit' && mode !== 'pty-host' && mode !== 'raw') throw new TypeError(`Expected the sides argument to be ptykit, pty-host or raw, got ${mode}`)
  const side = mode === 'pty-host' ? createPtyHostSide() : mode === 'ptykit' ? createPtykitSide() : null
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
  const stalls = await alternate({
    pairs,
    raw: async () => {
      if (mode === 'pty-host') return Number.NaN
      const probe = startProbe()
      await new Promise((resolve) => setImmediate(resolve))
      const t0 = nowMs()
      const p = pty.spawn(FILE, ARGS, rawSpawnOptions())
      syncCallMs.raw.push(nowMs() - t0)
      await rawExit(p)
      return record('raw', probe.stop())
    },
    ptykit: async () => {
      if (side === null) return Number.NaN
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
  await side?.dispose()
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
