/**
 * Memory per idle PTY: the parent's RSS and V8 heap with 0 and N idle PTYs, each side in its own
 * fresh child process (`--expose-gc`) so the two never share a heap. Per-PTY cost is
 * (with N − with 0) / N; the controller's overhead is ptykit's per-PTY cost minus raw's.
 */
import { alternate } from '../alternate.js'
import { runChild } from '../child.js'
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import type { IdleMemoryChildResult } from './idle-memory-child.js'

/** The controller's budget per idle PTY, from the issue. */
export const IDLE_OVERHEAD_BUDGET_BYTES = 8 * 1024

const CHILD = 'bench/figures/idle-memory-child.ts'

/** Measures the two idle-memory rows (RSS and V8 heap). */
export async function measureIdleMemory(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { ptys, settleMs, pairs } = config.idleMemory
  const heap = { raw: [] as number[], ptykit: [] as number[] }
  const perPty = async (side: 'raw' | 'ptykit'): Promise<number> => {
    const r = await runChild<IdleMemoryChildResult>(CHILD, [side, String(ptys), String(settleMs)], { nodeFlags: ['--expose-gc'] })
    heap[side].push((r.top.heapUsed - r.base.heapUsed) / ptys)
    return (r.top.rss - r.base.rss) / ptys
  }
  const rss = await alternate({
    pairs,
    warmupPairs: 0,
    raw: () => perPty('raw'),
    ptykit: () => perPty('ptykit'),
    onPair: (i, raw, ptykit) =>
      log(`  idle memory pair ${i}: RSS/PTY raw ${(raw / 1024).toFixed(1)} KiB, ptykit ${(ptykit / 1024).toFixed(1)} KiB`),
  })
  const heapSamples = {
    raw: heap.raw,
    ptykit: heap.ptykit,
    ratios: heap.raw.some((r) => r <= 0) ? [] : heap.ptykit.map((p, i) => p / (heap.raw[i] as number)),
    differences: heap.ptykit.map((p, i) => p - (heap.raw[i] as number)),
  }
  const common = `${ptys} idle PTYs (/bin/sleep 600) per child; one fresh child process per side per pair, after a warm-up spawn and two forced GCs.`
  const judge = config.mode === 'full'
  return [
    makeFigure(
      {
        id: 'idle-memory-rss',
        name: 'memory per idle PTY (RSS)',
        unit: 'B/PTY',
        target: { kind: 'overhead-at-most', value: IDLE_OVERHEAD_BUDGET_BYTES },
        targetText: 'controller overhead ≤ 8 KiB/PTY',
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
        targetText: 'controller overhead ≤ 8 KiB/PTY',
        notes: [common, 'heapUsed after two forced GCs; judged on the median of per-pair differences ptykit − raw.'],
      },
      heapSamples,
      judge,
    ),
  ]
}
