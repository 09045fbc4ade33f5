/**
 * Does the parent's work right after a fork slow its child? Raw node-pty only: each spawn of
 * `/bin/echo hi` either returns from the fork at once or first spins SPIN_US on the CPU (the two
 * alternate), and the time from the fork's return to the master's first `data` is compared. The
 * spin runs while the child is still starting (its output comes ~4–5 ms after the fork here), so
 * with independent CPUs it would cost the child nothing. Not a test and not part of `npm run bench`:
 *
 * ```sh
 * npx tsx bench/spin-after-fork.ts [SPAWNS=300] [SPIN_US=300]
 * ```
 */
import tty from 'node:tty'
import { nodePtyNative } from './node-pty-native.js'
import { pty, rawExit, rawSpawnOptions } from './raw-pty.js'
import { median, nowMs } from './stats.js'

const SPAWNS = Number(process.argv[2] ?? 300)
const SPIN_MS = Number(process.argv[3] ?? 300) / 1000
const WARM_UP = 20

let spinMs = 0
let forkEnd = 0
let socketData = 0
const fork = nodePtyNative.fork.bind(nodePtyNative)
nodePtyNative.fork = (...args) => {
  const result = fork(...args)
  forkEnd = nowMs()
  if (spinMs > 0) {
    const until = forkEnd + spinMs
    while (nowMs() < until) {
      // spin: the parent busy on its CPU while the child starts
    }
  }
  return result
}
const emit = tty.ReadStream.prototype.emit
tty.ReadStream.prototype.emit = function (this: tty.ReadStream, event: string | symbol, ...rest: unknown[]) {
  if (event === 'data' && socketData === 0) socketData = nowMs()
  return Reflect.apply(emit, this, [event, ...rest]) as boolean
} as typeof emit

const samples: Record<'still' | 'spinning', number[]> = { still: [], spinning: [] }
for (let i = 0; i < SPAWNS + WARM_UP; i++) {
  for (const mode of i % 2 === 0 ? (['spinning', 'still'] as const) : (['still', 'spinning'] as const)) {
    spinMs = mode === 'spinning' ? SPIN_MS : 0
    socketData = 0
    const p = pty.spawn('/bin/echo', ['hi'], rawSpawnOptions())
    p.onData(() => {})
    await rawExit(p)
    if (i >= WARM_UP && socketData > 0) samples[mode].push(socketData - forkEnd)
  }
}
const still = median(samples.still) * 1000
const spinning = median(samples.spinning) * 1000
process.stdout.write(`fork returned → first data, median of ${SPAWNS}: still ${still.toFixed(0)} µs, spinning ${SPIN_MS * 1000} µs ${spinning.toFixed(0)} µs (${(spinning - still).toFixed(0)} µs later)\n`)
