/**
 * Concurrent spawns: N `sh -c 'exit 0'` issued at once, timed until all have exited; spawns/s.
 * node-pty's forkpty runs on the JS thread, so "concurrent" spawns are serialized by the host.
 */
import { alternate } from '../alternate.js'
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { createPtykitSide, type PtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { nowMs } from '../stats.js'

const FILE = '/bin/sh'
const ARGS = ['-c', 'exit 0']

async function rawRound(atOnce: number): Promise<number> {
  const t0 = nowMs()
  const exits: Promise<unknown>[] = []
  for (let i = 0; i < atOnce; i++) exits.push(rawExit(pty.spawn(FILE, ARGS, rawSpawnOptions())))
  await Promise.all(exits)
  return atOnce / ((nowMs() - t0) / 1000)
}

async function ptykitRound(side: PtykitSide, atOnce: number): Promise<number> {
  const t0 = nowMs()
  const spawns: Promise<{ id: string }>[] = []
  for (let i = 0; i < atOnce; i++) spawns.push(side.controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS }))
  const handles = await Promise.all(spawns)
  await Promise.all(handles.map((h) => side.tracker.get(h.id).exited))
  const rate = atOnce / ((nowMs() - t0) / 1000)
  for (const h of handles) side.tracker.forget(h.id)
  return rate
}

/** Measures the concurrent spawns figure. */
export async function measureConcurrentSpawns(config: BenchConfig, log: (line: string) => void): Promise<FigureResult> {
  const { atOnce, pairs } = config.concurrentSpawns
  const side = createPtykitSide()
  try {
    const samples = await alternate({
      pairs,
      raw: () => rawRound(atOnce),
      ptykit: () => ptykitRound(side, atOnce),
      onPair: (i, raw, ptykit) => log(`  concurrent spawns pair ${i}: raw ${raw.toFixed(0)}/s, ptykit ${ptykit.toFixed(0)}/s`),
    })
    return makeFigure(
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
  } finally {
    await side.dispose()
  }
}
