/**
 * Where spawn → exit goes, raw node-pty against the controller over the node-pty provider,
 * alternating one spawn each in one process: the spawn call to node-pty's fork returning, that to
 * node-pty's native exit callback (its `waitpid` thread's report, heard in the event loop), and
 * that to the exit event the caller hears (node-pty's `onExit`, the controller's `exit`) — each
 * with the parent's minor page faults. Not a test and not part of `npm run bench`; run against the
 * built package:
 *
 * ```sh
 * npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json node --import tsx bench/exit-phases.ts [SPAWNS=300] [nodrain]
 * ```
 *
 * The child is `/bin/echo hi` (output, then the exit); `FILE=/bin/sh ARGS='["-c","exit 0"]'` runs
 * the bench's spawn → exit child instead. `nodrain` gives the provider `drainOutputAtExit: false`.
 */
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { alternateRecording } from './alternate.js'
import { nodePtyNative } from './node-pty-native.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'
import { median, nowMs } from './stats.js'

const SPAWNS = Number(process.argv[2] ?? 300)
const WARM_UP = 30
const DRAIN = process.argv[3] !== 'nodrain'
const FILE = process.env.FILE ?? '/bin/echo'
const ARGS = process.env.ARGS === undefined ? ['hi'] : (JSON.parse(process.env.ARGS) as string[])

type Mark = { at: number; faults: number }
const mark = (): Mark => ({ at: nowMs(), faults: process.resourceUsage().minorPageFault })
let forkEnd: Mark | null = null
let nativeExit: Mark | null = null

// Patched where node-pty finds it: its native module's fork, and the exit callback passed to it.
const fork = nodePtyNative.fork.bind(nodePtyNative)
nodePtyNative.fork = (...args) => {
  const onexit = args[10]
  args[10] = (code: number, signal: number) => {
    nativeExit = mark()
    onexit(code, signal)
  }
  const result = fork(...args)
  forkEnd = mark()
  return result
}

const controller = createPtyController({ provider: createNodePtyProvider({ drainOutputAtExit: DRAIN }) })
let exitWaiter: (() => void) | null = null
controller.on('exit', () => exitWaiter?.())

const PHASES = ['total', 'toForked', 'forkedToNativeExit', 'nativeExitToExitEvent'] as const
const FAULTS = ['faultsToForked', 'faultsForkedToNativeExit', 'faultsNativeExitToExitEvent'] as const
type Phases = Record<(typeof PHASES)[number] | (typeof FAULTS)[number], number>
const phases: Record<'raw' | 'ptykit', Phases[]> = { raw: [], ptykit: [] }

function record(side: 'raw' | 'ptykit', start: Mark, end: Mark): void {
  if (forkEnd === null || nativeExit === null) throw new Error(`${side}: a mark is missing`)
  const forked = forkEnd as Mark
  const exited = nativeExit as Mark
  phases[side].push({
    total: end.at - start.at,
    toForked: forked.at - start.at,
    forkedToNativeExit: exited.at - forked.at,
    nativeExitToExitEvent: end.at - exited.at,
    faultsToForked: forked.faults - start.faults,
    faultsForkedToNativeExit: exited.faults - forked.faults,
    faultsNativeExitToExitEvent: end.faults - exited.faults,
  })
}

async function rawOnce(keep: boolean): Promise<void> {
  forkEnd = nativeExit = null
  const start = mark()
  const p = pty.spawn(FILE, ARGS, rawSpawnOptions())
  p.onData(() => {})
  await rawExit(p)
  const end = mark()
  if (keep) record('raw', start, end)
}

async function ptykitOnce(keep: boolean): Promise<void> {
  forkEnd = nativeExit = null
  let end: Mark | null = null
  const exited = new Promise<void>((resolve) => {
    exitWaiter = () => {
      end = mark()
      resolve()
    }
  })
  const start = mark()
  await controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
  await exited
  if (keep && end !== null) record('ptykit', start, end)
}

await alternateRecording(SPAWNS, WARM_UP, rawOnce, ptykitOnce)

process.stdout.write(`${SPAWNS} spawns per side of ${FILE} ${ARGS.join(' ')}, alternating, drain ${DRAIN ? 'on' : 'off'}; medians\n`)
for (const key of PHASES) {
  const raw = median(phases.raw.map((p) => p[key])) * 1000
  const ours = median(phases.ptykit.map((p) => p[key])) * 1000
  process.stdout.write(`${key.padEnd(22)} raw ${raw.toFixed(1).padStart(8)} µs  ptykit ${ours.toFixed(1).padStart(8)} µs  difference ${(ours - raw).toFixed(1).padStart(7)} µs\n`)
}
for (const key of FAULTS) {
  const mean = (side: 'raw' | 'ptykit'): number => phases[side].reduce((sum, p) => sum + p[key], 0) / phases[side].length
  process.stdout.write(`${key.padEnd(28)} mean raw ${mean('raw').toFixed(1).padStart(6)}  ptykit ${mean('ptykit').toFixed(1).padStart(6)}\n`)
}
await controller.dispose()
