/**
 * The byte path (issue 18.3): the controller over the node-pty provider with `output: 'bytes'`
 * (no string decode anywhere; a consumer that acknowledges every chunk, in bytes), against the
 * upper bound of what this machine's kernel PTY delivers at all — a tight `os.read` loop in
 * Python (`bench/kernel-pty-read.py`) — with raw node-pty's string path measured in the same
 * pairs beside it. Same producer and size as the throughput figure.
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
import { floodCommand, rawSample } from './throughput.js'

/** The kernel loop's result line. */
type KernelRead = { bytes: number; seconds: number }

/** Runs the Python reader once; fails with how to install python3 when it is missing. */
function kernelSample(bytes: number): Promise<KernelRead> {
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
      resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as KernelRead)
    })
  })
}


/** Measures the byte path against the kernel loop, and beside raw node-pty's string path. */
export async function measureBytePath(config: BenchConfig, log: (line: string) => void): Promise<FigureResult[]> {
  const { bytes, pairs } = config.throughput
  const provider = createNodePtyProvider({ output: 'bytes' })
  const controller = createPtyController({ provider })
  let received = 0
  let last = 0
  let onExit: (() => void) | null = null
  controller.on('bytes', (event) => {
    received += event.bytes.length
    last = nowMs()
    controller.acknowledgeData(event.ptyId, event.bytes.length)
  })
  controller.on('exit', () => onExit?.())
  const short = { kernel: 0, ptykit: 0, nodePty: 0 }
  const nodePtyMbps: number[] = []
  try {
    const samples = await alternate({
      pairs,
      // Quick runs only exercise the code: no warm-up pair of three 2 MB floods.
      warmupPairs: config.mode === 'full' ? 1 : 0,
      raw: async (pair) => {
        const s = await rawSample(bytes)
        const k = await kernelSample(bytes)
        if (pair >= 0) {
          nodePtyMbps.push(s.mbps)
          if (s.received !== bytes) short.nodePty++
          if (k.bytes !== bytes) short.kernel++
        }
        return k.bytes / MB / k.seconds
      },
      ptykit: async (pair) => {
        collectGarbage()
        received = 0
        const { file, args } = floodCommand(bytes)
        const t0 = nowMs()
        last = t0
        const exited = new Promise<void>((resolve) => {
          onExit = resolve
        })
        await controller.spawn({ file, args, cols: BENCH_COLS, rows: BENCH_ROWS })
        await exited
        if (pair >= 0 && received !== bytes) short.ptykit++
        return received / MB / ((last - t0) / 1000)
      },
      onPair: (i, kernel, ptykit) =>
        log(`  byte-path pair ${i}: kernel loop ${kernel.toFixed(1)} MB/s, ptykit bytes ${ptykit.toFixed(1)} MB/s, node-pty strings ${nodePtyMbps.at(-1)?.toFixed(1)} MB/s`),
    })
    const nodePty = nodePtyMbps
    const common = `${bytes / MB} MB of 'a' per sample (the throughput figure's producer); MB/s from the spawn (fork) to the last chunk read.`
    const shortNote = `Samples that arrived short: kernel loop ${short.kernel}, ptykit bytes ${short.ptykit}, raw node-pty strings ${short.nodePty} of ${pairs}.`
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
            "ptykit side: controller + node-pty provider with `output: 'bytes'` (encoding: null, no decode), `bytes` events acknowledged per chunk.",
            'raw side: `bench/kernel-pty-read.py`, pty.fork() and os.read(fd, 65536) until EIO — what the kernel PTY gives a reader that does nothing else.',
            shortNote,
          ],
          details: { bytes, shortSamples: short },
        },
        samples,
        config.mode === 'full',
      ),
      makeFigure(
        {
          id: 'byte-path-vs-node-pty',
          name: 'output throughput, bytes mode vs raw node-pty strings',
          unit: 'MB/s',
          target: { kind: 'none' },
          targetText: 'report',
          notes: [common, 'raw side: node-pty with its default utf8 strings, measured in the same pairs, right before the kernel loop.', shortNote],
          details: { bytes },
        },
        pairedSamples(samples.ptykit, nodePty),
        config.mode === 'full',
      ),
    ]
  } finally {
    await controller.dispose()
    await provider.dispose()
  }
}
