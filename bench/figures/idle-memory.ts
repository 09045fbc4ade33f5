/**
 * Memory per idle PTY: the parent's RSS, V8 heap and external memory with N/2 and N idle PTYs,
 * each side in its own fresh child process (`--expose-gc`, two full GCs before each reading) so
 * the two never share a heap. Per-PTY cost is the slope (with N − with N/2) / (N − N/2), so what
 * grows once during the first burst of spawns is left out (issue 18). The controller + provider
 * overhead is ptykit's per-PTY cost minus raw's.
 *
 * What is counted, and why (measured with `/proc/self/smaps` diffs, V8's per-space statistics,
 * glibc's `malloc_stats()` and heap-snapshot diffs at 100 → 200 PTYs, issue 18):
 *
 * - Every PTY of either side costs its parent one node-pty `waitpid` thread, whose stack is
 *   ~8 KiB resident, plus node-pty's objects (~3 KiB of heap) and some malloc'd state. Those
 *   count, on both sides.
 * - ptykit's own objects count: they are the `heapUsed` slope (and the old-space pages they
 *   fill, in RSS).
 * - **V8 resizing its young generation does not count, and is pinned out.** With V8's default
 *   sizing the new space grows and shrinks by megabytes depending on how much garbage the
 *   *loop that opens the PTYs* makes (raw node-pty spawns in a tight synchronous loop and
 *   its new space shrank between the readings, −20 to −75 KiB "per PTY"; ptykit's awaited
 *   spawns kept it large), and V8 releases the freed pages later from a background thread. That
 *   was most of the old +10 KiB RSS gap, in whichever direction the run happened to go. Both
 *   children therefore run with the young generation fixed at V8's own starting size
 *   ({@link IDLE_MEMORY_SEMI_SPACE_MB}): it cannot grow or shrink, so it cancels out of the
 *   slope, while the old space — where an idle PTY's objects live — still grows freely and counts.
 * - V8's committed heap (`heapTotal`) is reported beside it as its own row, so what part of the
 *   RSS slope is pages V8 holds stays visible.
 *
 * What remains noisy is malloc: its arenas grow and are trimmed in steps of hundreds of KiB
 * (thread-pool and GC helper threads), ±5 KiB/PTY at 200 PTYs on either side; hence the median
 * over pairs.
 */
import { alternate, pairedSamples } from '../alternate.js'
import { runChild } from '../child.js'
import type { BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import type { IdleMemoryChildResult } from './idle-memory-child.js'

/** The controller + provider budget per idle PTY, from issue 18. */
export const IDLE_OVERHEAD_BUDGET_BYTES = 4 * 1024

/**
 * Each semi-space of V8's young generation in the idle-memory children, in MiB, as both the
 * minimum and the maximum: V8's own starting size on 64-bit, so the young generation never grows
 * or shrinks between the readings (see the module comment for why that is not a per-PTY cost).
 */
export const IDLE_MEMORY_SEMI_SPACE_MB = 1

/** Node flags of both idle-memory children: forced GCs, and the pinned young generation. */
const CHILD_NODE_FLAGS = ['--expose-gc', `--min-semi-space-size=${IDLE_MEMORY_SEMI_SPACE_MB}`, `--max-semi-space-size=${IDLE_MEMORY_SEMI_SPACE_MB}`]

const CHILD = 'bench/figures/idle-memory-child.ts'

/** Measures the idle-memory rows (RSS, V8 heap used and committed, external). */
export async function measureIdleMemory(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { ptys, settleMs, pairs } = config.idleMemory
  const heap = { raw: [] as number[], ptykit: [] as number[] }
  const committed = { raw: [] as number[], ptykit: [] as number[] }
  const external = { raw: [] as number[], ptykit: [] as number[] }
  const perPty = async (side: 'raw' | 'ptykit'): Promise<number> => {
    const r = await runChild<IdleMemoryChildResult>(CHILD, [side, String(ptys), String(settleMs)], { nodeFlags: CHILD_NODE_FLAGS })
    const slope = ptys - Math.floor(ptys / 2)
    heap[side].push((r.top.heapUsed - r.half.heapUsed) / slope)
    committed[side].push((r.top.heapTotal - r.half.heapTotal) / slope)
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
  const paired = (sides: { raw: number[]; ptykit: number[] }) => pairedSamples(sides.ptykit, sides.raw)
  const common = `${ptys} idle PTYs (/bin/sleep 600) per child, opened in two halves; per PTY = the slope over the second half; one fresh child process per side per pair, after a warm-up spawn, two forced GCs and a short settle before each reading; V8's young generation pinned at ${IDLE_MEMORY_SEMI_SPACE_MB} MiB per semi-space on both sides (its resizing is not a per-PTY cost).`
  const judge = config.mode === 'full'
  return [
    makeFigure(
      {
        id: 'idle-memory-rss',
        name: 'memory per idle PTY (RSS)',
        unit: 'B/PTY',
        target: { kind: 'overhead-at-most', value: IDLE_OVERHEAD_BUDGET_BYTES },
        targetText: 'controller + provider overhead ≤ 4 KiB/PTY',
        notes: [common, 'Judged on the median of per-pair differences ptykit − raw (RSS stays noisy: malloc arenas grow and shrink in steps of hundreds of KiB).'],
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
        id: 'idle-memory-heap-committed',
        name: 'memory per idle PTY (V8 heap committed)',
        unit: 'B/PTY',
        target: { kind: 'none' },
        targetText: 'report',
        notes: [common, 'process.memoryUsage().heapTotal: the pages V8 holds, used or not (part of the RSS row).'],
      },
      paired(committed),
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
