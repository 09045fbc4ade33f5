/**
 * Where spawn → first byte goes, raw node-pty against the controller over the node-pty provider,
 * alternating one spawn each in one process (`echo hi`, as the bench's row): the spawn call to
 * node-pty's native `fork`, the fork itself, the fork's return to the master's first `data` at
 * node-pty's socket, and that to the listener's first chunk — each with the parent's minor page
 * faults. Not a test and not part of `npm run bench`; run against the built package:
 *
 * ```sh
 * npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json node --import tsx bench/first-byte-phases.ts [SPAWNS=300]
 * ```
 */
import tty from 'node:tty'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { alternateRecording } from './alternate.js'
import { nodePtyNative } from './node-pty-native.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'
import { nowMs } from './stats.js'

const SPAWNS = Number(process.argv[2] ?? 300)
const WARM_UP = 30
const FILE = '/bin/echo'
const ARGS = ['hi']

type Mark = { at: number; faults: number }
const mark = (): Mark => ({ at: nowMs(), faults: process.resourceUsage().minorPageFault })
let forkStart: Mark | null = null
let forkEnd: Mark | null = null
let socketData: Mark | null = null

const fork = nodePtyNative.fork.bind(nodePtyNative)
nodePtyNative.fork = (...args) => {
  forkStart = mark()
  const result = fork(...args)
  forkEnd = mark()
  return result
}
const emit = tty.ReadStream.prototype.emit
tty.ReadStream.prototype.emit = function (this: tty.ReadStream, event: string | symbol, ...rest: unknown[]) {
  if (event === 'data' && socketData === null) socketData = mark()
  return Reflect.apply(emit, this, [event, ...rest]) as boolean
} as typeof emit

const controller = createPtyController({ provider: createNodePtyProvider() })
let firstChunk: Mark | null = null
let exitWaiter: (() => void) | null = null
controller.on('data', () => {
  if (firstChunk === null) firstChunk = mark()
})
controller.on('exit', () => exitWaiter?.())

type Phases = { toFork: number; fork: number; forkToSocket: number; socketToListener: number; total: number; faultsToFork: number; faultsFork: number; faultsForkToSocket: number; faultsSocketToListener: number }
const readOuts = { raw: 0, ptykit: 0 }
const phases: Record<'raw' | 'ptykit', Phases[]> = { raw: [], ptykit: [] }

function record(side: 'raw' | 'ptykit', start: Mark, listener: Mark | null): void {
  if (forkStart === null || forkEnd === null || listener === null) throw new Error(`${side}: a mark is missing ${JSON.stringify({ forkStart, forkEnd, socketData, listener })}`)
  const fs = forkStart as Mark
  const fe = forkEnd as Mark
  if (socketData === null) readOuts[side]++
  const sd = (socketData as Mark | null) ?? listener
  phases[side].push({
    toFork: fs.at - start.at, fork: fe.at - fs.at, forkToSocket: sd.at - fe.at, socketToListener: listener.at - sd.at, total: listener.at - start.at,
    faultsToFork: fs.faults - start.faults, faultsFork: fe.faults - fs.faults, faultsForkToSocket: sd.faults - fe.faults, faultsSocketToListener: listener.faults - sd.faults,
  })
}

async function rawOnce(keep: boolean): Promise<void> {
  forkStart = forkEnd = socketData = null
  let listener: Mark | null = null
  const start = mark()
  const p = pty.spawn(FILE, ARGS, rawSpawnOptions())
  p.onData(() => {
    if (listener === null) listener = mark()
  })
  await rawExit(p)
  if (keep) record('raw', start, listener)
}

async function ptykitOnce(keep: boolean): Promise<void> {
  forkStart = forkEnd = socketData = null
  firstChunk = null
  const exited = new Promise<void>((resolve) => (exitWaiter = resolve))
  const start = mark()
  await controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
  await exited
  if (keep) record('ptykit', start, firstChunk)
}

await alternateRecording(SPAWNS, WARM_UP, rawOnce, ptykitOnce)

const median = (values: number[]): number => values.slice().sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN
process.stdout.write(`${SPAWNS} spawns per side of ${FILE} ${ARGS.join(' ')}, alternating; medians\n`)
for (const key of ['total', 'toFork', 'fork', 'forkToSocket', 'socketToListener'] as const) {
  const raw = median(phases.raw.map((p) => p[key])) * 1000
  const ours = median(phases.ptykit.map((p) => p[key])) * 1000
  process.stdout.write(`${key.padEnd(18)} raw ${raw.toFixed(1).padStart(8)} µs  ptykit ${ours.toFixed(1).padStart(8)} µs  difference ${(ours - raw).toFixed(1).padStart(8)} µs\n`)
}
for (const key of ['faultsToFork', 'faultsFork', 'faultsForkToSocket', 'faultsSocketToListener'] as const) {
  const mean = (side: 'raw' | 'ptykit'): number => phases[side].reduce((s, p) => s + p[key], 0) / phases[side].length
  process.stdout.write(`${key.padEnd(24)} mean raw ${mean('raw').toFixed(1).padStart(6)}  ptykit ${mean('ptykit').toFixed(1).padStart(6)}\n`)
}
process.stdout.write(`first chunk without a socket data event (read out at the exit): raw ${readOuts.raw}, ptykit ${readOuts.ptykit}\n`)
await controller.dispose()
