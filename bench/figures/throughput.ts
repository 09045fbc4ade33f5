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
import { median, nowMs } from '../stats.js'

/** The producer: `head | tr` moves 8 KB blocks, ~840 MB/s here, far above the PTY's ~75 MB/s. */
export function floodCommand(bytes: number): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', `head -c ${bytes} /dev/zero | tr '\\0' a`] }
}

/**
 * One flood as the reading process saw it: throughput, and what the reading cost — the process's
 * CPU (every thread: JavaScript, libuv, GC) per MB and the bytes each chunk carried. CPU per MB
 * depends far less on the machine's load than MB/s does, so it tells a per-chunk cost from noise.
 */
export type FloodSample = {
  /** MB/s from the spawn call to the last chunk. */
  mbps: number
  /** Bytes (chars) received. */
  received: number
  /** The reading process's CPU time (user + system) per MB received. */
  cpuMsPerMB: number
  /** Average size of a chunk (one read of the master, one event). */
  bytesPerChunk: number
}

/** Counts a flood's chunks and the reading process's CPU; `finish` turns them into a {@link FloodSample}. */
export function floodMeter(): { chunk(length: number): void; finish(t0: number): FloodSample } {
  const cpu0 = process.cpuUsage()
  let received = 0
  let chunks = 0
  let last = nowMs()
  return {
    chunk(length) {
      received += length
      chunks += 1
      last = nowMs()
    },
    finish(t0) {
      const cpu = process.cpuUsage(cpu0)
      return {
        mbps: received / MB / ((last - t0) / 1000),
        received,
        cpuMsPerMB: (cpu.user + cpu.system) / 1000 / (received / MB),
        bytesPerChunk: chunks === 0 ? 0 : received / chunks,
      }
    },
  }
}

/**
 * One raw node-pty flood sample: MB/s from the spawn call to the last chunk. Utf8 strings (node-pty's
 * default), or with `bytes: true` node-pty's own bytes path (`encoding: null`, `Buffer` chunks).
 */
export async function rawSample(bytes: number, options: { bytes?: boolean } = {}): Promise<FloodSample> {
  collectGarbage()
  const { file, args } = floodCommand(bytes)
  const meter = floodMeter()
  const t0 = nowMs()
  const p = pty.spawn(file, args, options.bytes === true ? { ...rawSpawnOptions(), encoding: null } : rawSpawnOptions())
  // node-pty types `onData` as strings; with `encoding: null` the chunks are Buffers (same length rule).
  p.onData((d) => meter.chunk(d.length))
  await rawExit(p)
  return meter.finish(t0)
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
  const costs: { raw: FloodSample[]; ptykit: FloodSample[] } = { raw: [], ptykit: [] }
  const ptykitSample = async (): Promise<FloodSample> => {
    collectGarbage()
    const { file, args } = floodCommand(bytes)
    const cpu0 = process.cpuUsage()
    const t0 = nowMs()
    const handle = await side.controller.spawn({ file, args, cols: BENCH_COLS, rows: BENCH_ROWS })
    const tracked = side.tracker.get(handle.id)
    await tracked.exited
    const cpu = process.cpuUsage(cpu0)
    side.tracker.forget(handle.id)
    return {
      mbps: tracked.chars / MB / (((tracked.lastDataAt ?? t0) - t0) / 1000),
      received: tracked.chars,
      cpuMsPerMB: (cpu.user + cpu.system) / 1000 / (tracked.chars / MB),
      bytesPerChunk: tracked.chunks === 0 ? 0 : tracked.chars / tracked.chunks,
    }
  }
  try {
    const samples = await alternate({
      pairs,
      // The pty host side's first spawn starts the host: keep it out of the samples.
      warmupPairs: ptyHost ? 1 : 0,
      raw: async () => {
        const s = await rawSample(bytes)
        if (s.received !== bytes) short.raw++
        costs.raw.push(s)
        return s.mbps
      },
      ptykit: async () => {
        const s = await ptykitSample()
        if (s.received !== bytes) short.ptykit++
        costs.ptykit.push(s)
        return s.mbps
      },
      onPair: (i, raw, ptykit) => log(`  ${id} pair ${i}: raw ${raw.toFixed(1)} MB/s, ptykit ${ptykit.toFixed(1)} MB/s`),
    })
    log(`  ${id} reader cost: raw ${describeCost(costs.raw)}; ptykit ${describeCost(costs.ptykit)}`)
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
          `Reader cost (medians; the bench process's CPU, every thread${ptyHost ? ', so not the pty host process' : ''}): raw ${describeCost(costs.raw)}; ptykit ${describeCost(costs.ptykit)}.`,
        ],
        details: { bytes, shortSamples: short, readerCost: { raw: summarizeCost(costs.raw), ptykit: summarizeCost(costs.ptykit) } },
      },
      samples,
      config.mode === 'full',
    )
  } finally {
    await side.dispose()
  }
}

/** Medians of a side's reader cost, for a figure's details. */
export function summarizeCost(samples: readonly FloodSample[]): { cpuMsPerMB: number; bytesPerChunk: number } | null {
  if (samples.length === 0) return null
  return { cpuMsPerMB: median(samples.map((s) => s.cpuMsPerMB)), bytesPerChunk: median(samples.map((s) => s.bytesPerChunk)) }
}

/** A side's reader cost in words: CPU ms per MB and bytes per chunk (medians). */
export function describeCost(samples: readonly FloodSample[]): string {
  const cost = summarizeCost(samples)
  return cost === null ? 'n/a' : `${cost.cpuMsPerMB.toFixed(2)} ms CPU/MB, ${Math.round(cost.bytesPerChunk)} B/chunk`
}
