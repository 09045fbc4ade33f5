/**
 * Where the path to the fork goes, raw node-pty against the controller over the node-pty provider,
 * alternating one `echo hi` each in one process: controller call → the provider's `spawn`, the
 * provider → node-pty's `spawn` (the launch plan; its `access(X_OK)` timed apart), node-pty's
 * `spawn` → its native `fork` (the same code on both sides); then the fork's return → the spawn's
 * promise settling and → the event loop's next turn, with this process's CPU time and minor page
 * faults over the latter (the turn's CPU is node-pty's own work after the fork, on both sides).
 * Not a test and not part of `npm run bench`; run against the built package:
 *
 * ```sh
 * npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json node --import tsx bench/tofork-split.ts [SPAWNS=300]
 * ```
 */
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { alternateRecording } from './alternate.js'
import { nodePtyNative } from './node-pty-native.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'
import { median, nowMs } from './stats.js'

const SPAWNS = Number(process.argv[2] ?? 300)
const WARM_UP = 30
const FILE = '/bin/echo'
const ARGS = ['hi']

type Marks = { call?: number; provider?: number; nodePtySpawn?: number; fork?: number; forked?: number; turn?: number; turnCpuUs?: number; turnFaults?: number }
let marks: Marks = {}
let accessMs = 0

// Patched where the built package finds them: node-pty's module object, its native fork, node:fs.
const accessSync = fs.accessSync
fs.accessSync = ((...args: Parameters<typeof fs.accessSync>) => {
  const start = nowMs()
  try {
    accessSync(...args)
  } finally {
    accessMs += nowMs() - start
  }
}) as typeof fs.accessSync
syncBuiltinESMExports()
const fork = nodePtyNative.fork.bind(nodePtyNative)
nodePtyNative.fork = (...args) => {
  marks.fork = nowMs()
  const result = fork(...args)
  marks.forked = nowMs()
  const cpu = process.cpuUsage()
  const faults = process.resourceUsage().minorPageFault
  const at = marks
  setImmediate(() => {
    at.turn = nowMs()
    const used = process.cpuUsage(cpu)
    at.turnCpuUs = used.user + used.system
    at.turnFaults = process.resourceUsage().minorPageFault - faults
  })
  return result
}
const nodePtySpawn = pty.spawn
;(pty as { spawn: typeof pty.spawn }).spawn = (...args) => {
  marks.nodePtySpawn = nowMs()
  return nodePtySpawn(...args)
}
const provider = createNodePtyProvider()
const providerSpawn = provider.spawn.bind(provider)
provider.spawn = (options) => {
  marks.provider = nowMs()
  return providerSpawn(options)
}
const controller = createPtyController({ provider })
let exitWaiter: (() => void) | null = null
controller.on('exit', () => exitWaiter?.())

const rows = new Map<string, number[]>()
const add = (row: string, value: number): void => {
  const values = rows.get(row) ?? []
  values.push(value)
  rows.set(row, values)
}
const afterFork = (side: string, at: Marks): void => {
  add(`${side}: fork returned → next turn (µs)`, ((at.turn as number) - (at.forked as number)) * 1000)
  add(`${side}:   CPU over it (µs)`, at.turnCpuUs as number)
  add(`${side}:   minor faults over it`, at.turnFaults as number)
}

async function rawOnce(keep: boolean): Promise<void> {
  marks = {}
  const at = marks
  const start = nowMs()
  const p = pty.spawn(FILE, ARGS, rawSpawnOptions())
  await rawExit(p)
  if (!keep) return
  add('raw: node-pty spawn → fork (µs)', ((at.fork as number) - start) * 1000)
  afterFork('raw', at)
}

async function ptykitOnce(keep: boolean): Promise<void> {
  marks = {}
  const at = marks
  accessMs = 0
  const exited = new Promise<void>((resolve) => (exitWaiter = resolve))
  const start = nowMs()
  await controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
  const settled = nowMs()
  await exited
  if (!keep) return
  add('ptykit: controller call → fork (µs)', ((at.fork as number) - start) * 1000)
  add('ptykit:   call → provider spawn (µs)', ((at.provider as number) - start) * 1000)
  add('ptykit:   provider → node-pty spawn (µs)', ((at.nodePtySpawn as number) - (at.provider as number)) * 1000)
  add('ptykit:     of it access(X_OK) (µs)', accessMs * 1000)
  add('ptykit:   node-pty spawn → fork (µs)', ((at.fork as number) - (at.nodePtySpawn as number)) * 1000)
  add('ptykit: fork returned → spawn settled (µs)', (settled - (at.forked as number)) * 1000)
  afterFork('ptykit', at)
}

await alternateRecording(SPAWNS, WARM_UP, rawOnce, ptykitOnce)
process.stdout.write(`${SPAWNS} spawns per side of ${FILE} ${ARGS.join(' ')}, alternating; medians\n`)
for (const [row, values] of [...rows].sort(([a], [b]) => (a.startsWith('raw') === b.startsWith('raw') ? 0 : a.startsWith('raw') ? -1 : 1))) {
  process.stdout.write(`${row.padEnd(44)} ${median(values).toFixed(1).padStart(8)}\n`)
}
await controller.dispose()
