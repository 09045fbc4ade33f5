/**
 * What lies between `controller.spawn()` and node-pty's native `fork`: the wall time, and how many
 * event-loop turns the path crosses (a `setImmediate` chain started at the call counts the turns
 * that passed when the fork begins). Microtasks are free of turns; a turn means the path waited
 * for a macrotask (I/O, a timer, an immediate). Not a test and not part of `npm run bench`:
 *
 * ```sh
 * npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json node --import tsx bench/tofork-turns.ts [SPAWNS=200]
 * ```
 */
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { nodePtyNative } from './node-pty-native.js'
import { pty, rawExit, rawSpawnOptions } from './raw-pty.js'
import { nowMs } from './stats.js'

const SPAWNS = Number(process.argv[2] ?? 200)
let turns = 0
let atFork: { at: number; turns: number } | null = null
const fork = nodePtyNative.fork.bind(nodePtyNative)
nodePtyNative.fork = (...args) => {
  atFork = { at: nowMs(), turns }
  return fork(...args)
}
function countTurns(): () => void {
  turns = 0
  let stopped = false
  const tick = (): void => {
    if (stopped) return
    turns += 1
    setImmediate(tick)
  }
  setImmediate(tick)
  return () => void (stopped = true)
}

const controller = createPtyController({ provider: createNodePtyProvider() })
const exits = new Map<string, () => void>()
controller.on('exit', (event) => exits.get(event.ptyId)?.())
const sides = { raw: [] as { ms: number; turns: number }[], ptykit: [] as { ms: number; turns: number }[] }
for (let index = 0; index < SPAWNS + 20; index++) {
  for (const side of ['raw', 'ptykit'] as const) {
    atFork = null
    const stop = countTurns()
    const started = nowMs()
    if (side === 'raw') {
      const terminal = pty.spawn('/bin/echo', ['hi'], rawSpawnOptions())
      const sample = { ms: atFork!.at - started, turns: atFork!.turns }
      stop()
      await rawExit(terminal)
      if (index >= 20) sides.raw.push(sample)
    } else {
      let exited!: () => void
      const exit = new Promise<void>((resolve) => (exited = resolve))
      const reply = await controller.spawn({ file: '/bin/echo', args: ['hi'] })
      exits.set(reply.id, exited)
      const sample = { ms: atFork!.at - started, turns: atFork!.turns }
      stop()
      await exit
      if (index >= 20) sides.ptykit.push(sample)
    }
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!
for (const [side, samples] of Object.entries(sides)) {
  const turnCounts = new Map<number, number>()
  for (const sample of samples) turnCounts.set(sample.turns, (turnCounts.get(sample.turns) ?? 0) + 1)
  console.log(`${side.padEnd(7)} to the fork: median ${(median(samples.map((s) => s.ms)) * 1000).toFixed(1)} µs; turns crossed: ${[...turnCounts].sort((a, b) => a[0] - b[0]).map(([t, n]) => `${t}×${n}`).join(' ')}`)
}
await controller.dispose()
