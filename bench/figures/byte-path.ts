/**
 * The byte path (issue 18.3): the controller over the node-pty provider with `output: 'bytes'`
 * (no string decode anywhere; a consumer that acknowledges every chunk, in bytes), against the
 * upper bound of what this machine's kernel PTY delivers at all — a tight `os.read` loop in
 * Python (`bench/kernel-pty-read.py`) — with raw node-pty's bytes and string paths measured in
 * the same pairs beside it. Same producer and size as the throughput figure.
 */
import { execFile } from 'node:child_process'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { alternate, pairedSamples } from '../alternate.js'
import { REPO_ROOT } from '../child.js'
import type { BenchConfig } from '../config.js'
import { MB } from '../config.js'
import { makeFigure, type FigureResult } from '../figure.js'
import { collectGarbage } from '../gc.js'
import { BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { nowMs } from '../stats.js'
import { describeCost, floodCommand, floodMeter, rawSample, summarizeCost, type FloodSample } from './throughput.js'

/** The kernel loop's result line. */
type KernelRead = { bytes: number; seconds: number; reads: number; cpuSeconds: number }

/** Runs the Python reader once; fails with how to install python3 when it is missing. */
function kernelSample(bytes: number): Promise<FloodSample> {
  return new Promise((resolve, reject) => {
    execFile('python3', ['bench/kernel-pty-read.py', String(bytes)], { cwd: REPO_ROOT, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error !== null) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
        reject(
          new Error(
            missing
              ? 'python3 is needed for the kernel PTY read loop (install it: apt-get install python3)'
              : `bench/kernel-pty-read.py failed: ${error.message} ${stderr}`,
          ),
        )
        return
      }
      const k = JSON.parse(stdout.trim().split('\n').pop() ?? '') as KernelRead
      resolve({
        mbps: k.bytes / MB / k.seconds,
        received: k.bytes,
        cpuMsPerMB: (k.cpuSeconds * 1000) / (k.bytes / MB),
        bytesPerChunk: k.reads === 0 ? 0 : k.bytes / k.reads,
      })
    })
  })
}

/**
 * Measures the byte path against the kernel loop, and beside raw node-pty's string and bytes paths.
 * The three rows split the gap to the kernel loop: what Node's own read path costs (raw node-pty
 * bytes against the kernel loop) and what ptykit adds on top of it (ptykit bytes against raw
 * node-pty bytes); each row's notes give every side's reader CPU per MB and bytes per read.
 */
export async function measureBytePath(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { bytes, pairs } = config.throughput
  const provider = createNodePtyProvider({ output: 'bytes' })
  const controller = createPtyController({ provider })
  let meter: ReturnType<typeof floodMeter> | null = null
  let onExit: (() => void) | null = null
  controller.on('bytes', (event) => {
    meter?.chunk(event.bytes.length)
    controller.acknowledgeData(event.ptyId, event.bytes.length)
  })
  controller.on('exit', () => onExit?.())
  const short = { kernel: 0, ptykit: 0, nodePty: 0, nodePtyBytes: 0 }
  const costs: { kernel: FloodSample[]; ptykit: FloodSample[]; nodePty: FloodSample[]; nodePtyBytes: FloodSample[] } = {
    kernel: [],
    ptykit: [],
    nodePty: [],
    nodePtyBytes: [],
  }
  const note = (side: keyof typeof costs, s: FloodSample, pair: number): void => {
    if (pair < 0) return
    costs[side].push(s)
    if (s.received !== bytes) short[side]++
  }
  try {
    const samples = await alternate({
      pairs,
      // Quick runs only exercise the code: no warm-up pair of four 2 MB floods.
      warmupPairs: config.mode === 'full' ? 1 : 0,
      raw: async (pair) => {
        note('nodePty', await rawSample(bytes), pair)
        note('nodePtyBytes', await rawSample(bytes, { bytes: true }), pair)
        const k = await kernelSample(bytes)
        note('kernel', k, pair)
        return k.mbps
      },
      ptykit: async (pair) => {
        collectGarbage()
        const { file, args } = floodCommand(bytes)
        const exited = new Promise<void>((resolve) => {
          onExit = resolve
        })
        const sampleMeter = floodMeter()
        meter = sampleMeter
        const t0 = nowMs()
        await controller.spawn({ file, args, cols: BENCH_COLS, rows: BENCH_ROWS })
        await exited
        meter = null
        const s = sampleMeter.finish(t0)
        note('ptykit', s, pair)
        return s.mbps
      },
      onPair: (i, kernel, ptykit) =>
        log(
          `  byte-path pair ${i}: kernel loop ${kernel.toFixed(1)} MB/s, ptykit bytes ${ptykit.toFixed(1)} MB/s, ` +
            `node-pty bytes ${costs.nodePtyBytes.at(-1)?.mbps.toFixed(1)} MB/s, node-pty strings ${costs.nodePty.at(-1)?.mbps.toFixed(1)} MB/s`,
        ),
    })
    const mbps = (side: FloodSample[]): number[] => side.map((s) => s.mbps)
    const common = `${bytes / MB} MB of 'a' per sample (the throughput figure's producer); MB/s from the spawn (fork) to the last chunk read.`
    const shortNote =
      `Samples that arrived short: kernel loop ${short.kernel}, ptykit bytes ${short.ptykit}, raw node-pty bytes ${short.nodePtyBytes}, ` +
      `raw node-pty strings ${short.nodePty} of ${pairs}.`
    const costNote =
      `Reader cost (medians; CPU of the reading process, every thread): kernel loop ${describeCost(costs.kernel)}; ` +
      `raw node-pty bytes ${describeCost(costs.nodePtyBytes)}; ptykit bytes ${describeCost(costs.ptykit)}; raw node-pty strings ${describeCost(costs.nodePty)}.`
    log(`  byte-path ${costNote}`)
    const details = {
      bytes,
      shortSamples: short,
      readerCost: {
        kernel: summarizeCost(costs.kernel),
        nodePtyBytes: summarizeCost(costs.nodePtyBytes),
        ptykit: summarizeCost(costs.ptykit),
        nodePty: summarizeCost(costs.nodePty),
      },
    }
    const ptykitSide = "ptykit side: controller + node-pty provider with `output: 'bytes'` (encoding: null, no decode), `bytes` events acknowledged per chunk."
    return [
      makeFigure(
        {
          id: 'byte-path',
          name: 'output throughput, bytes mode vs the kernel PTY loop',
          unit: 'MB/s',
          baseline: 'kernel PTY read loop (python3 os.read)',
          target: { kind: 'ratio-at-least', value: 0.95 },
          targetText: '≥ 0.95× the kernel loop',
          notes: [
            common,
            ptykitSide,
            'raw side: `bench/kernel-pty-read.py`, pty.fork() and os.read(fd, 65536) until EIO — what the kernel PTY gives a reader that does nothing else.',
            shortNote,
            costNote,
          ],
          details,
        },
        samples,
        config.mode === 'full',
      ),
      makeFigure(
        {
          id: 'byte-path-vs-node-pty-bytes',
          name: 'output throughput, bytes mode vs raw node-pty bytes',
          unit: 'MB/s',
          baseline: 'raw node-pty, encoding: null',
          target: { kind: 'none' },
          targetText: 'report',
          notes: [
            common,
            ptykitSide,
            "raw side: node-pty spawned with `encoding: null` (its own bytes path, Buffer chunks, no decode), measured in the same pairs: what ptykit's bytes mode adds to node-pty's read.",
            shortNote,
            costNote,
          ],
          details,
        },
        pairedSamples(samples.ptykit, mbps(costs.nodePtyBytes)),
        config.mode === 'full',
      ),
      makeFigure(
        {
          id: 'byte-path-vs-node-pty',
          name: 'output throughput, bytes mode vs raw node-pty strings',
          unit: 'MB/s',
          target: { kind: 'none' },
          targetText: 'report',
          notes: [common, 'raw side: node-pty with its default utf8 strings, measured in the same pairs.', shortNote, costNote],
          details,
        },
        pairedSamples(samples.ptykit, mbps(costs.nodePty)),
        config.mode === 'full',
      ),
    ]
  } finally {
    await controller.dispose()
    await provider.dispose()
  }
}
