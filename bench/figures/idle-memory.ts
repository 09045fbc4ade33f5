/**
 * Memory per idle PTY: the parent's RSS, V8 heap and external memory with N/2 and N idle PTYs,
 * each side in its own fresh child process (`--expose-gc`, two full GCs before each reading) so
 * the two never share a heap. Per-PTY cost is the slope (with N − with N/2) / (N − N/2): V8's
 * young generation and malloc's arenas grow during the first burst of spawns, once, and the slope
 * over the second half leaves that one-off growth out (issue 18). The controller + provider
 * overhead is ptykit's per-PTY cost minus raw's.
 */
import { alternate } from '../alternate.js'
import { runChild } from '../child.js'
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import type { IdleMemoryChildResult } from './idle-memory-child.js'

/** The controller + provider budget per idle PTY, from issue 18. */
export const IDLE_OVERHEAD_BUDGET_BYTES = 4 * 1024

const CHILD = 'bench/figures/idle-memory-child.ts'

/** Measures the two idle-memory rows (RSS and V8 heap). */
export async function measureIdleMemory(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { ptys, settleMs, pairs } = config.idleMemory
  const heap = { raw: [] as number[], ptykit: [] as number[] }
  const external = { raw: [] as number[], ptykit: [] as number[] }
  const perPty = async (side: 'raw' | 'ptykit'): Promise<number> => {
    const r = await runChild<IdleMemoryChildResult>(CHILD, [side, String(ptys), String(settleMs)], { nodeFlags: ['--expose-gc'] })
    const slope = ptys - Math.floor(ptys / 2)
    heap[side].push((r.top.heapUsed - r.half.heapUsed) / slope)
    external[side].push((r.top.external - r.half.external) / slope)
    return (r.top.rss - r.half.rss) / slope
  }
  const rss = await alternate({
    pairs,
    warmupPairs: 0,
    raw: () => perPty('raw'),
    ptykit: () => perPty('ptykit'),
    onPair: (i, raw, ptykit) =>
      log(`  idle memory pair ${i}: RSS/PTY raw ${(raw / 1024).toFixed(1)} KiB, ptykit ${(ptykit / 1024).toFixed(1)} KiB`),
  })
  const paired = (sides: { raw: number[]; ptykit: number[] }) => ({
    raw: sides.raw,
    ptykit: sides.ptykit,
    ratios: sides.raw.some((r) => r <= 0) ? [] : sides.ptykit.map((p, i) => p / (sides.raw[i] as number)),
    differences: sides.ptykit.map((p, i) => p - (sides.raw[i] as number)),
  })
  const common = `${ptys} idle PTYs (/bin/sleep 600) per child, opened in two halves; per PTY = the slope over the second half (so V8's one-off young-generation growth is left out); one fresh child process per side per pair, after a warm-up spawn, two forced GCs before each reading.`
  const judge = config.mode === 'full'
  return [
    makeFigure(
      {
        id: 'idle-memory-rss',
        name: 'memory per idle PTY (RSS)',
        unit: 'B/PTY',
        target: { kind: 'overhead-at-most', value: IDLE_OVERHEAD_BUDGET_BYTES },
        targetText: 'controller + provider overhead ≤ 4 KiB/PTY',
        notes: [common, 'Judged on the median of per-pair differences ptykit − raw (RSS is noisy: malloc arenas of the per-PTY threads).'],
      },
      rss,
      judge,
    ),
    makeFigure(
      {
        id: 'idle-memory-heap',
        name: 'memory per idle PTY (V8 heap)',
        unit: 'B/PTY',
        target: { kind: 'overhead-at-most', value: IDLE_OVERHEAD_BUDGET_BYTES },
        targetText: 'controller + provider overhead ≤ 4 KiB/PTY',
        notes: [common, 'heapUsed after two forced GCs; judged on the median of per-pair differences ptykit − raw.'],
      },
      paired(heap),
      judge,
    ),
    makeFigure(
      {
        id: 'idle-memory-external',
        name: 'memory per idle PTY (external)',
        unit: 'B/PTY',
        target: { kind: 'none' },
        targetText: 'report',
        notes: [common, 'process.memoryUsage().external (Buffers and ArrayBuffers outside the V8 heap).'],
      },
      paired(external),
      judge,
    ),
  ]
}
