/**
 * Flood with a slow consumer: a child writes N bytes while the consumer acknowledges only at a
 * fixed rate. The parent's RSS must stay bounded (flow control back-pressures the child through
 * the kernel) and every byte must arrive, counted exactly.
 */
import { alternate } from '../alternate.js'
import { runChild } from '../child.js'
import { MB, MIB, type BenchConfig } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import type { FloodChildResult } from './flood-child.js'

/** The budget for the parent's RSS growth during the flood. */
export const FLOOD_RSS_GROWTH_BUDGET_BYTES = 32 * MIB

const CHILD = 'bench/figures/flood-child.ts'

/** Measures the two flood rows: RSS growth and bytes lost. */
export async function measureFlood(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { bytes, ackBytesPerSecond, pairs } = config.flood
  const runs: FloodChildResult[] = []
  const lost = { raw: [] as number[], ptykit: [] as number[] }
  const run = async (side: 'raw' | 'ptykit'): Promise<number> => {
    const r = await runChild<FloodChildResult>(CHILD, [side, String(bytes), String(ackBytesPerSecond)], { nodeFlags: ['--expose-gc'] })
    runs.push(r)
    lost[side].push(r.bytes - r.received)
    return (r.maxRss - r.baseRss) / MIB
  }
  const rss = await alternate({
    pairs,
    warmupPairs: 0,
    raw: () => run('raw'),
    ptykit: () => run('ptykit'),
    onPair: (i, raw, ptykit) => {
      // The pair's two runs, raw's first (the order within a pair alternates).
      const last = runs.slice(-2).sort((a, b) => (a.side === b.side ? 0 : a.side === 'raw' ? -1 : 1))
      log(
        `  flood pair ${i}: RSS growth raw ${raw.toFixed(1)} MiB, ptykit ${ptykit.toFixed(1)} MiB; ` +
          `lost raw ${String(lost.raw[i])} B, ptykit ${String(lost.ptykit[i])} B; ` +
          `rate ${last.map((r) => (r.received / MB / (r.durationMs / 1000)).toFixed(1)).join(' / ')} MB/s`,
      )
    },
  })
  const rates = (side: string): number[] =>
    runs.filter((r) => r.side === side).map((r) => r.received / MB / (r.durationMs / 1000))
  const lostSamples = {
    raw: lost.raw,
    ptykit: lost.ptykit,
    // A ratio of lost bytes means nothing (0 ÷ 0); the row reports counts and the difference.
    ratios: [],
    differences: lost.ptykit.map((p, i) => p - (lost.raw[i] as number)),
  }
  const judge = config.mode === 'full'
  const method =
    `${bytes / MB} MB of 'a' while the consumer acknowledges ${ackBytesPerSecond / MB} MB/s ` +
    `(ptykit: controller flow control at its defaults; raw: node-pty with hand-written pause()/resume() at the same watermarks); one fresh child process per side per pair.`
  return [
    makeFigure(
      {
        id: 'flood-rss',
        name: 'flood, slow consumer: RSS growth',
        unit: 'MiB',
        target: { kind: 'value-at-most', value: FLOOD_RSS_GROWTH_BUDGET_BYTES / MIB },
        targetText: 'parent RSS growth ≤ 32 MiB',
        notes: [method, 'RSS growth = max RSS sampled every 20 ms − RSS after a warm-up spawn and two forced GCs.'],
        details: { deliveredMBps: { raw: rates('raw'), ptykit: rates('ptykit') } },
      },
      rss,
      judge,
    ),
    makeFigure(
      {
        id: 'flood-lost',
        name: 'flood, slow consumer: bytes lost',
        unit: 'B',
        target: { kind: 'value-exactly', value: 0 },
        targetText: '0 bytes lost',
        notes: [method, 'Lost = bytes written − chars received by the exit event, counted exactly (ASCII, no newline).'],
      },
      lostSamples,
      judge,
    ),
  ]
}
