/**
 * Where a round of concurrent spawns goes, raw node-pty against the controller over the node-pty
 * provider, alternating in one process: 50 `sh -c 'exit 0'` issued at once per round (the bench's
 * concurrent-spawns figure), with node-pty's native `fork` timed. Per round: the time to the first
 * fork, the forks themselves (node-pty's native call, with the minor page faults the parent takes
 * in it), the gaps between two forks (everything that runs on the JS thread between them), and the
 * tail from the last fork to the last exit event. Not a test and not part of
 * `npm run bench`; run against the built package:
 *
 * ```sh
 * npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json node --import tsx bench/spawn-round-timeline.ts [ROUNDS=24]
 * ```
 */
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { nodePtyNative } from './node-pty-native.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'
import { nowMs } from './stats.js'

const ROUNDS = Number(process.argv[2] ?? 24)
const WARM_UP_ROUNDS = 4
const AT_ONCE = 50
const FILE = '/bin/sh'
const ARGS = ['-c', 'exit 0']

/** Each fork's start and end in the current round. */
let forks: { start: number; end: number; faults: number; faultsBefore: number; faultsAfter: number }[] = []
const fork = nodePtyNative.fork.bind(nodePtyNative)
nodePtyNative.fork = (...args) => {
  const f0 = process.resourceUsage().minorPageFault
  const start = nowMs()
  const result = fork(...args)
  const end = nowMs()
  const f1 = process.resourceUsage().minorPageFault
  forks.push({ start, end, faults: f1 - f0, faultsBefore: f0, faultsAfter: f1 })
  return result
}

const controller = createPtyController({ provider: createNodePtyProvider() })
const exitWaiters = new Map<string, () => void>()
const exited = new Set<string>()
controller.on('exit', ({ ptyId }) => {
  exited.add(ptyId)
  exitWaiters.get(ptyId)?.()
})

/** Resolves with the time of the round's last exit event. */
async function rawRound(): Promise<number> {
  let last = 0
  const exits: Promise<void>[] = []
  for (let i = 0; i < AT_ONCE; i++) {
    exits.push(rawExit(pty.spawn(FILE, ARGS, rawSpawnOptions())).then(() => void (last = nowMs())))
  }
  await Promise.all(exits)
  return last
}

async function controllerRound(): Promise<number> {
  let last = 0
  const replies = await Promise.all(Array.from({ length: AT_ONCE }, () => controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })))
  await Promise.all(
    replies.map(({ id }) => (exited.has(id) ? undefined : new Promise<void>((resolve) => exitWaiters.set(id, resolve)))),
  )
  for (const { id } of replies) {
    exitWaiters.delete(id)
    exited.delete(id)
  }
  last = nowMs()
  return last
}

type RoundParts = { total: number; toFirstFork: number; forks: number; gaps: number; tail: number; forkFaults: number; gapFaults: number }
const parts: Record<'raw' | 'controller', RoundParts[]> = { raw: [], controller: [] }

for (let round = 0; round < ROUNDS + WARM_UP_ROUNDS; round++) {
  const order: ('raw' | 'controller')[] = round % 2 === 0 ? ['raw', 'controller'] : ['controller', 'raw']
  for (const side of order) {
    forks = []
    const start = nowMs()
    const lastExit = side === 'raw' ? await rawRound() : await controllerRound()
    if (round < WARM_UP_ROUNDS) continue
    let forkTime = 0
    let gaps = 0
    let gapFaults = 0
    forks.forEach((f, i) => {
      forkTime += f.end - f.start
      const previous = forks[i - 1]
      if (previous !== undefined) {
        gaps += f.start - previous.end
        gapFaults += f.faultsBefore - previous.faultsAfter
      }
    })
    const first = forks[0]
    const last = forks.at(-1)
    if (first === undefined || last === undefined) throw new Error(`No fork was seen in a ${side} round`)
    parts[side].push({ total: lastExit - start, toFirstFork: first.start - start, forks: forkTime, gaps, tail: lastExit - last.end, forkFaults: forks.reduce((sum, f) => sum + f.faults, 0), gapFaults })
  }
}

const median = (values: number[]): number => values.slice().sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN
const perSpawnUs = (ms: number): string => `${((ms / AT_ONCE) * 1000).toFixed(1)} µs`
process.stdout.write(`${ROUNDS} rounds per side of ${AT_ONCE} spawns at once; medians, per spawn\n`)
for (const key of ['total', 'toFirstFork', 'forks', 'gaps', 'tail'] as const) {
  const raw = median(parts.raw.map((p) => p[key]))
  const ours = median(parts.controller.map((p) => p[key]))
  process.stdout.write(`${key.padEnd(12)} raw ${perSpawnUs(raw).padStart(10)}  controller ${perSpawnUs(ours).padStart(10)}  difference ${perSpawnUs(ours - raw).padStart(10)}\n`)
}
const faultsPerFork = (side: 'raw' | 'controller'): string => (median(parts[side].map((p) => p.forkFaults)) / AT_ONCE).toFixed(1)
process.stdout.write(`minor page faults in the parent per native fork call: raw ${faultsPerFork('raw')}, controller ${faultsPerFork('controller')}\n`)
const faultsPerGap = (side: 'raw' | 'controller'): string => (median(parts[side].map((p) => p.gapFaults)) / (AT_ONCE - 1)).toFixed(1)
process.stdout.write(`minor page faults in the parent between two forks: raw ${faultsPerGap('raw')}, controller ${faultsPerGap('controller')}\n`)
await controller.dispose()
