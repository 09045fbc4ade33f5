/**
 * `dataBatchMs` (issue 18.4): `data` events per MB of a flood through the controller with a 5 ms
 * coalescing window, against the same controller and provider without it, alternating. The
 * throughput figure's producer and size; the consumer acknowledges every event.
 */
import { alternate } from '../alternate.js'
import type { BenchConfig } from '../config.js'
import { MB } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { collectGarbage } from '../gc.js'
import { createPtykitSide, type PtykitSide } from '../ptykit-side.js'
import { BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { median, nowMs } from '../stats.js'
import { floodCommand } from './throughput.js'

/** The window measured (VS Code's `TerminalDataBufferer` default). */
export const BENCH_DATA_BATCH_MS = 5

/** Counts a side's `data` events while it runs one flood; resolves with events per MB and MB/s. */
async function floodEvents(side: PtykitSide, bytes: number): Promise<{ perMb: number; mbps: number; received: number }> {
  collectGarbage()
  let events = 0
  const count = (): void => {
    events += 1
  }
  side.controller.on('data', count)
  try {
    const { file, args } = floodCommand(bytes)
    const t0 = nowMs()
    const handle = await side.controller.spawn({ file, args, cols: BENCH_COLS, rows: BENCH_ROWS })
    const tracked = side.tracker.get(handle.id)
    await tracked.exited
    side.tracker.forget(handle.id)
    const seconds = ((tracked.lastDataAt ?? t0) - t0) / 1000
    return { perMb: events / (tracked.chars / MB), mbps: tracked.chars / MB / seconds, received: tracked.chars }
  } finally {
    side.controller.off('data', count)
  }
}

/** Measures `data` events per MB with and without `dataBatchMs`. */
export async function measureDataBatching(config: BenchConfig, log: (line: string) => void): Promise<FigureResult> {
  const { bytes, pairs } = config.throughput
  const plain = createPtykitSide()
  const batched = createPtykitSide(undefined, undefined, { dataBatchMs: BENCH_DATA_BATCH_MS })
  const mbps = { plain: [] as number[], batched: [] as number[] }
  const short = { plain: 0, batched: 0 }
  try {
    const samples = await alternate({
      pairs,
      warmupPairs: config.mode === 'full' ? 1 : 0,
      raw: async (pair) => {
        const s = await floodEvents(plain, bytes)
        if (pair >= 0) {
          mbps.plain.push(s.mbps)
          if (s.received !== bytes) short.plain++
        }
        return s.perMb
      },
      ptykit: async (pair) => {
        const s = await floodEvents(batched, bytes)
        if (pair >= 0) {
          mbps.batched.push(s.mbps)
          if (s.received !== bytes) short.batched++
        }
        return s.perMb
      },
      onPair: (i, r, p) => log(`  data events per MB pair ${i}: off ${r.toFixed(1)}, dataBatchMs ${BENCH_DATA_BATCH_MS} ${p.toFixed(1)}`),
    })
    return makeFigure(
      {
        id: 'data-batching',
        name: `data events per MB, dataBatchMs ${BENCH_DATA_BATCH_MS}`,
        unit: 'events/MB',
        baseline: 'the same controller, dataBatchMs off',
        target: { kind: 'ratio-at-most', value: 0.1 },
        targetText: '≤ 0.10× (≥ 10× fewer events)',
        notes: [
          `${bytes / MB} MB of 'a' per sample (the throughput figure's producer), every event acknowledged; both sides are the controller + node-pty provider.`,
          `Throughput in the same samples (median): off ${median(mbps.plain).toFixed(1)} MB/s, dataBatchMs ${median(mbps.batched).toFixed(1)} MB/s.`,
          `Samples that arrived short: off ${short.plain}/${pairs}, dataBatchMs ${short.batched}/${pairs}.`,
        ],
        details: { bytes, mbps, shortSamples: short },
      },
      samples,
      config.mode === 'full',
    )
  } finally {
    await plain.dispose()
    await batched.dispose()
  }
}
