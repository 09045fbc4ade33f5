/**
 * Concurrent spawns: N `sh -c 'exit 0'` issued at once, timed until all have exited; spawns/s.
 * node-pty's forkpty runs on the JS thread, so "concurrent" spawns are serialized by the host.
 */
import { alternate, pairedSamples } from '../alternate.js'
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { createPtykitSide, type PtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { nowMs } from '../stats.js'

const FILE = '/bin/sh'
const ARGS = ['-c', 'exit 0']

/** This process's minor page faults so far (each write fault after a fork costs ~14 µs on the VM of docs/performance.md). */
const minorFaults = (): number => process.resourceUsage().minorPageFault

/** The parent's minor page faults per spawn of each round, by side, in run order. */
type RoundFaults = { raw: number[]; ptykit: number[] }

async function rawRound(atOnce: number, faults: number[] | null): Promise<number> {
  const faultsBefore = minorFaults()
  const t0 = nowMs()
  const exits: Promise<unknown>[] = []
  for (let i = 0; i < atOnce; i++) exits.push(rawExit(pty.spawn(FILE, ARGS, rawSpawnOptions())))
  await Promise.all(exits)
  const rate = atOnce / ((nowMs() - t0) / 1000)
  faults?.push((minorFaults() - faultsBefore) / atOnce)
  return rate
}

async function ptykitRound(side: PtykitSide, atOnce: number, faults: number[] | null): Promise<number> {
  const faultsBefore = minorFaults()
  const t0 = nowMs()
  const spawns: Promise<{ id: string }>[] = []
  for (let i = 0; i < atOnce; i++) spawns.push(side.controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS }))
  const handles = await Promise.all(spawns)
  await Promise.all(handles.map((h) => side.tracker.get(h.id).exited))
  const rate = atOnce / ((nowMs() - t0) / 1000)
  faults?.push((minorFaults() - faultsBefore) / atOnce)
  for (const h of handles) side.tracker.forget(h.id)
  return rate
}

/**
 * Measures the concurrent spawns figure, and beside it (reported, not judged) the parent's minor
 * page faults per spawn over the same rounds: on a VM where a fault after a fork is dear, they are
 * a large part of the row's gap (docs/performance.md, "5 Dec, twelfth session").
 */
export async function measureConcurrentSpawns(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { atOnce, pairs } = config.concurrentSpawns
  const side = createPtykitSide()
  const faults: RoundFaults = { raw: [], ptykit: [] }
  // `alternate` numbers its warm-up pairs below 0: their faults are not recorded.
  const measured = (pairIndex: number, series: number[]): number[] | null => (pairIndex >= 0 ? series : null)
  try {
    const samples = await alternate({
      pairs,
      raw: (i) => rawRound(atOnce, measured(i, faults.raw)),
      ptykit: (i) => ptykitRound(side, atOnce, measured(i, faults.ptykit)),
      onPair: (i, raw, ptykit) => log(`  concurrent spawns pair ${i}: raw ${raw.toFixed(0)}/s, ptykit ${ptykit.toFixed(0)}/s`),
    })
    const rate = makeFigure(
      {
        id: 'concurrent-spawns',
        name: 'concurrent spawns',
        unit: 'spawns/s',
        target: { kind: 'ratio-at-least', value: 0.97 },
        targetText: '≥ 0.97× raw',
        notes: [`${atOnce} × sh -c 'exit 0' issued at once, until every exit event; ${pairs} rounds per side.`],
      },
      samples,
      config.mode === 'full',
    )
    const pageFaults = makeFigure(
      {
        id: 'concurrent-spawns-faults',
        name: 'concurrent spawns: parent page faults',
        unit: 'faults/spawn',
        target: { kind: 'none' },
        targetText: 'report',
        notes: [`Minor page faults of this process per spawn, over the same rounds as the concurrent spawns row (all threads: main, V8's, libuv's).`],
      },
      pairedSamples(faults.ptykit, faults.raw),
      config.mode === 'full',
    )
    return [rate, pageFaults]
  } finally {
    await side.dispose()
  }
}
