/**
 * Output throughput: a child writes N bytes of `a` as fast as it can (no newline, so the PTY's
 * ONLCR does not change the count); MB/s from the spawn call to the last chunk reaching the
 * listener — ptykit's controller `data` event against node-pty's `onData`.
 */
import { alternate } from '../alternate.js'
import type { BenchConfig } from '../config.js'
import { MB } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { collectGarbage } from '../gc.js'
import { createPtyHostSide } from '../pty-host-side.js'
import { createPtykitSide, type PtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { nowMs } from '../stats.js'

/** The producer: `head | tr` moves 8 KB blocks, ~840 MB/s here, far above the PTY's ~75 MB/s. */
export function floodCommand(bytes: number): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', `head -c ${bytes} /dev/zero | tr '\\0' a`] }
}

type Sample = { mbps: number; received: number }

/** One raw node-pty flood sample (utf8 strings): MB/s from the spawn call to the last chunk. */
export async function rawSample(bytes: number): Promise<Sample> {
  collectGarbage()
  const { file, args } = floodCommand(bytes)
  const t0 = nowMs()
  const p = pty.spawn(file, args, rawSpawnOptions())
  let received = 0
  let last = t0
  p.onData((d) => {
    received += d.length
    last = nowMs()
  })
  await rawExit(p)
  return { mbps: received / MB / ((last - t0) / 1000), received }
}

/** Measures the throughput figure: a consumer that acknowledges every chunk at once. */
export function measureThroughput(config: BenchConfig, log: (line: string) => void): Promise<FigureResult> {
  return measureThroughputOf(config, log, { acknowledge: true })
}

/**
 * Measures the throughput of the controller over the pty host provider (issue 16: target ≥ 0.8×
 * in-process node-pty's raw figure): the bytes cross the host's node-pty, the socket and the
 * app's provider. Full runs only (starting a host would double the quick run's spawn figures).
 */
export async function measurePtyHostThroughput(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  if (config.mode !== 'full') return []
  return [await measureThroughputOf(config, log, { acknowledge: true, ptyHost: true })]
}

/**
 * Measures the throughput of a consumer that never calls `acknowledgeData` (a log tailer, a task
 * runner): the default flow control must never engage for it, so it runs at raw node-pty speed.
 */
export function measureNonAckingThroughput(config: BenchConfig, log: (line: string) => void): Promise<FigureResult> {
  return measureThroughputOf(config, log, { acknowledge: false })
}

async function measureThroughputOf(
  config: BenchConfig,
  log: (line: string) => void,
  { acknowledge, ptyHost = false }: { acknowledge: boolean; ptyHost?: boolean },
): Promise<FigureResult> {
  const { bytes, pairs } = config.throughput
  const id = ptyHost ? 'throughput-pty-host' : acknowledge ? 'throughput' : 'throughput-non-acking'
  const side: PtykitSide = ptyHost ? createPtyHostSide() : createPtykitSide(undefined, { acknowledge })
  const short = { raw: 0, ptykit: 0 }
  const ptykitSample = async (): Promise<Sample> => {
    collectGarbage()
    const { file, args } = floodCommand(bytes)
    const t0 = nowMs()
    const handle = await side.controller.spawn({ file, args, cols: BENCH_COLS, rows: BENCH_ROWS })
    const tracked = side.tracker.get(handle.id)
    await tracked.exited
    side.tracker.forget(handle.id)
    return { mbps: tracked.chars / MB / (((tracked.lastDataAt ?? t0) - t0) / 1000), received: tracked.chars }
  }
  try {
    const samples = await alternate({
      pairs,
      // The pty host side's first spawn starts the host: keep it out of the samples.
      warmupPairs: ptyHost ? 1 : 0,
      raw: async () => {
        const s = await rawSample(bytes)
        if (s.received !== bytes) short.raw++
        return s.mbps
      },
      ptykit: async () => {
        const s = await ptykitSample()
        if (s.received !== bytes) short.ptykit++
        return s.mbps
      },
      onPair: (i, raw, ptykit) => log(`  ${id} pair ${i}: raw ${raw.toFixed(1)} MB/s, ptykit ${ptykit.toFixed(1)} MB/s`),
    })
    return makeFigure(
      {
        id,
        name: ptyHost ? 'output throughput, through the pty host' : acknowledge ? 'output throughput' : 'output throughput, consumer never acks',
        unit: 'MB/s',
        target: { kind: 'ratio-at-least', value: ptyHost ? 0.8 : 0.98 },
        targetText: ptyHost ? '≥ 0.80× raw' : '≥ 0.98× raw',
        notes: [
          ...(ptyHost
            ? ['ptykit side: the controller over `createPtyHostProvider` (host started from the build, `dist/pty-host/host-main.js`), against raw in-process node-pty.']
            : []),
          `${bytes / MB} MB of 'a' per sample; MB/s from the spawn call to the last chunk at the listener; utf8 strings on both sides.`,
          acknowledge
            ? 'The ptykit consumer acknowledges every chunk at once.'
            : 'The ptykit consumer never calls acknowledgeData: default flow control must not engage (no stall at the high watermark).',
          `Samples that arrived short: raw ${short.raw}/${pairs}, ptykit ${short.ptykit}/${pairs} (raw node-pty on Node 20 can drop the tail at exit).`,
        ],
        details: { bytes, shortSamples: short },
      },
      samples,
      config.mode === 'full',
    )
  } finally {
    await side.dispose()
  }
}
