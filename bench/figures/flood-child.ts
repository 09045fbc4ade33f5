/**
 * Child process of the flood figure (run with `--expose-gc`): a child writes N bytes as fast as
 * it can while the consumer acknowledges at a fixed rate; prints the parent's RSS growth and the
 * exact byte count as one JSON line.
 *
 * - ptykit: the controller's own flow control (defaults), fed by `acknowledgeData`.
 * - raw: node-pty with the same consumer and a hand-written `pause()`/`resume()` at the
 *   controller's default watermarks — what a host does without ptykit.
 *
 * Usage: flood-child.ts <raw|ptykit> <bytes> <ackBytesPerSecond>
 */
import { FLOW_CONTROL_HIGH_WATERMARK_CHARS, FLOW_CONTROL_LOW_WATERMARK_CHARS } from '../../src/controller/flow-control.js'
import { createPtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { nowMs } from '../stats.js'
import { floodCommand } from './throughput.js'

/** The consumer's clock tick: small next to the ~5 ms it takes to ack a high watermark at 20 MB/s. */
export const FLOOD_ACK_TICK_MS = 1

/** Unused acknowledgement budget is kept for at most this long, so a pause does not bank credit. */
export const FLOOD_ALLOWANCE_CAP_MS = 10

/** How often the parent's RSS is sampled during the flood. */
export const FLOOD_RSS_SAMPLE_MS = 20

/** What the child prints. */
export type FloodChildResult = {
  /** `raw` or `ptykit`. */
  side: string
  /** Bytes the child wrote. */
  bytes: number
  /** Chars the consumer received by the exit event. */
  received: number
  /** RSS after the warm-up spawn and two forced GCs, bytes. */
  baseRss: number
  /** Largest RSS sampled during the flood, bytes. */
  maxRss: number
  /** Spawn call to exit event, ms. */
  durationMs: number
}

async function main(): Promise<void> {
  const [side, bytesArg, rateArg] = process.argv.slice(2)
  const bytes = Number(bytesArg)
  const rate = Number(rateArg)
  if (side !== 'raw' && side !== 'ptykit') throw new TypeError(`Expected the side argument to be raw or ptykit, got ${String(side)}`)
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('flood-child needs --expose-gc')

  let pending = 0
  let received = 0
  let acknowledge: (chars: number) => void = () => {}
  const onChunk = (chars: number): void => {
    pending += chars
    received += chars
  }
  let allowance = 0
  let last = nowMs()
  const tick = (): void => {
    const now = nowMs()
    allowance = Math.min(allowance + (rate * (now - last)) / 1000, (rate * FLOOD_ALLOWANCE_CAP_MS) / 1000)
    last = now
    const ack = Math.min(pending, Math.floor(allowance))
    if (ack > 0) {
      pending -= ack
      allowance -= ack
      acknowledge(ack)
    }
  }

  const { file, args } = floodCommand(bytes)
  const ptykitSide = side === 'ptykit' ? createPtykitSide(undefined, { acknowledge: false }) : null
  // Warm-up spawn, then a collected heap: the baseline excludes one-time costs.
  if (ptykitSide === null) await rawExit(pty.spawn('/bin/sh', ['-c', 'exit 0'], rawSpawnOptions()))
  else {
    const warm = await ptykitSide.controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'], cols: BENCH_COLS, rows: BENCH_ROWS })
    await ptykitSide.tracker.get(warm.id).exited
    ptykitSide.tracker.forget(warm.id)
  }
  gc()
  gc()
  const baseRss = process.memoryUsage.rss()
  let maxRss = baseRss
  const sampler = setInterval(() => {
    maxRss = Math.max(maxRss, process.memoryUsage.rss())
  }, FLOOD_RSS_SAMPLE_MS)
  const ticker = setInterval(tick, FLOOD_ACK_TICK_MS)
  const t0 = nowMs()
  if (ptykitSide === null) {
    const p = pty.spawn(file, args, rawSpawnOptions())
    let paused = false
    p.onData((d) => {
      onChunk(d.length)
      if (!paused && pending > FLOW_CONTROL_HIGH_WATERMARK_CHARS) {
        paused = true
        p.pause()
      }
    })
    acknowledge = () => {
      if (paused && pending < FLOW_CONTROL_LOW_WATERMARK_CHARS) {
        paused = false
        p.resume()
      }
    }
    await rawExit(p)
  } else {
    const { controller, tracker } = ptykitSide
    let id: string | null = null
    let early = 0
    controller.on('data', (event) => onChunk(event.data.length))
    acknowledge = (chars) => {
      if (id === null) early += chars
      else controller.acknowledgeData(id, chars)
    }
    const handle = await controller.spawn({ file, args, cols: BENCH_COLS, rows: BENCH_ROWS })
    id = handle.id
    if (early > 0) controller.acknowledgeData(handle.id, early)
    await tracker.get(handle.id).exited
  }
  const durationMs = nowMs() - t0
  clearInterval(ticker)
  clearInterval(sampler)
  maxRss = Math.max(maxRss, process.memoryUsage.rss())
  await ptykitSide?.dispose()
  const result: FloodChildResult = { side, bytes, received, baseRss, maxRss, durationMs }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
