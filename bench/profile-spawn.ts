/**
 * A CPU-profile driver for the spawn path: N sequential `sh -c 'exit 0'` spawns (each waits for
 * its exit), or N spawned at once, through raw node-pty, the node-pty provider alone, or the
 * controller over it. Not a test and not part of `npm run bench`: run it under `--cpu-prof` and
 * read the profile with `bench/profile-summary.ts`, e.g.
 *
 * ```sh
 * node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile-spawn.ts provider 150
 * npx tsx bench/profile-summary.ts /tmp/prof/CPU.*.0.001.cpuprofile 170   # the main thread; 170 = warm-up + measured
 * ```
 *
 * Arguments: `raw | provider | controller` (default `controller`), the number of spawns (default
 * 150), `sequential | concurrent` (default `sequential`; concurrent spawns 50 at a time). A warm-up
 * of 20 spawns runs first, so the JIT's first compilations are not counted per spawn (they are in
 * the profile, but not in the figures printed). Prints the wall time and this process's CPU time
 * (user and system, all threads: the thread pool's too) per spawn.
 */
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'
import { ExitWaits } from './exit-waits.js'
import { nowMs } from './stats.js'

const side = process.argv[2] ?? 'controller'
const count = Number(process.argv[3] ?? 150)
const shape = process.argv[4] ?? 'sequential'
const FILE = '/bin/sh'
const ARGS = ['-c', 'exit 0']
const AT_ONCE = 50

if (!['raw', 'provider', 'controller'].includes(side)) throw new TypeError(`Expected the side to be raw, provider or controller, got ${side}`)
if (!Number.isInteger(count) || count < 1) throw new TypeError(`Expected the spawn count to be a positive integer, got ${process.argv[3]}`)
if (shape !== 'sequential' && shape !== 'concurrent') throw new TypeError(`Expected sequential or concurrent, got ${shape}`)

const provider = createNodePtyProvider()
const controller = side === 'controller' ? createPtyController({ provider }) : null
const exits = new ExitWaits()
if (controller !== null) controller.on('exit', ({ ptyId }) => exits.exited(ptyId))
else provider.onExit(({ id }) => exits.exited(id))

/** One spawn, resolved at its exit event. */
async function once(): Promise<void> {
  if (side === 'raw') {
    await rawExit(pty.spawn(FILE, ARGS, rawSpawnOptions()))
    return
  }
  const launch = { file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS }
  const { id } = controller !== null ? await controller.spawn(launch) : await provider.spawn(launch)
  await exits.exitOf(id)
}

async function run(n: number): Promise<void> {
  if (shape === 'sequential') {
    for (let i = 0; i < n; i++) await once()
    return
  }
  for (let done = 0; done < n; done += AT_ONCE) {
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, n - done) }, () => once()))
  }
}

await run(20)
const t0 = nowMs()
const cpu0 = process.cpuUsage()
await run(count)
const cpu = process.cpuUsage(cpu0)
const ms = nowMs() - t0
const perSpawn = (us: number): string => (us / 1000 / count).toFixed(3)
process.stdout.write(
  `${side} ${shape}: ${count} spawns, ${(ms / count).toFixed(3)} ms wall per spawn, this process's CPU ${perSpawn(cpu.user + cpu.system)} ms per spawn (user ${perSpawn(cpu.user)}, system ${perSpawn(cpu.system)})\n`,
)
await (controller !== null ? controller.dispose() : provider.dispose())
