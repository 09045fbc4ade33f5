/**
 * The shared loop of the two sequential spawn figures: spawn, wait for the exit, spawn the next;
 * each sample is the median of a block of spawns, and blocks alternate raw / ptykit.
 */
import { alternate, type PairedSamples } from '../alternate.js'
import type { PtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { median, nowMs } from '../stats.js'

/** Which moment ends the measured interval. */
export type SpawnMilestone = 'first-byte' | 'exit'

/** Spawn → milestone of one raw node-pty spawn, in ms. */
export async function rawSpawnOnce(file: string, args: readonly string[], milestone: SpawnMilestone): Promise<number> {
  const t0 = nowMs()
  const p = pty.spawn(file, [...args], rawSpawnOptions())
  let first: number | null = null
  p.onData(() => {
    if (first === null) first = nowMs()
  })
  await rawExit(p)
  const exitAt = nowMs()
  if (milestone === 'exit') return exitAt - t0
  if (first === null) throw new Error(`raw ${file} ${args.join(' ')} printed nothing`)
  return (first as number) - t0
}

/** Spawn → milestone of one spawn through the controller, in ms. */
export async function ptykitSpawnOnce(
  side: PtykitSide,
  file: string,
  args: readonly string[],
  milestone: SpawnMilestone,
): Promise<number> {
  const t0 = nowMs()
  const handle = await side.controller.spawn({ file, args: [...args], cols: BENCH_COLS, rows: BENCH_ROWS })
  const tracked = side.tracker.get(handle.id)
  const exitAt = await tracked.exited
  side.tracker.forget(handle.id)
  if (milestone === 'exit') return exitAt - t0
  if (tracked.firstDataAt === null) throw new Error(`ptykit ${file} ${args.join(' ')} printed nothing`)
  return tracked.firstDataAt - t0
}

/** Options of {@link alternateSequentialSpawns}. */
export type SequentialSpawnOptions = {
  /** The program. */
  file: string
  /** Its arguments. */
  args: readonly string[]
  /** Where the interval ends. */
  milestone: SpawnMilestone
  /** Spawns per sample. */
  perSample: number
  /** Pairs. */
  pairs: number
  /** The ptykit side to spawn through. */
  side: PtykitSide
  /** Progress output. */
  log: (line: string) => void
  /** Label for progress lines. */
  label: string
}

/** Alternating blocks of sequential spawns; every sample is one block's median, in ms. */
export async function alternateSequentialSpawns(options: SequentialSpawnOptions): Promise<PairedSamples> {
  const { file, args, milestone, perSample, side } = options
  const block = async (one: () => Promise<number>): Promise<number> => {
    const times: number[] = []
    for (let i = 0; i < perSample; i++) times.push(await one())
    return median(times)
  }
  return alternate({
    pairs: options.pairs,
    raw: () => block(() => rawSpawnOnce(file, args, milestone)),
    ptykit: () => block(() => ptykitSpawnOnce(side, file, args, milestone)),
    onPair: (i, raw, ptykit) =>
      options.log(`  ${options.label} pair ${i}: raw ${raw.toFixed(2)} ms, ptykit ${ptykit.toFixed(2)} ms`),
  })
}
