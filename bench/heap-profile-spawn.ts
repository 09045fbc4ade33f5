/**
 * Where a spawn's allocations go: a sampling heap profile (every allocation, the collected ones
 * too) of N concurrent `sh -c 'exit 0'` spawns, 50 at a time, through raw node-pty or the
 * controller over the node-pty provider. Prints the bytes allocated per spawn cycle, and the
 * allocation sites (function and source line) that took the most, per spawn. Not a test and not
 * part of `npm run bench`:
 *
 * ```sh
 * npx tsx --tsconfig bench/tsconfig.dist.json bench/heap-profile-spawn.ts controller 300 [TOP=40]
 * npx tsx --tsconfig bench/tsconfig.dist.json bench/heap-profile-spawn.ts raw 300
 * ```
 *
 * The sampling interval is 512 bytes, so a site's figure is an estimate (V8 scales each sample by
 * its interval); compare sides at the same N, and look at sites of a few hundred bytes per spawn
 * or more. A warm-up of 50 spawns runs first, outside the profile.
 */
import { Session } from 'node:inspector/promises'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { ExitWaits } from './exit-waits.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'

type SamplingNode = {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  selfSize: number
  children: SamplingNode[]
}

const side = process.argv[2] ?? 'controller'
const count = Number(process.argv[3] ?? 300)
const top = Number(process.argv[4] ?? 40)
const AT_ONCE = 50
const FILE = '/bin/sh'
const ARGS = ['-c', 'exit 0']
if (side !== 'raw' && side !== 'controller') throw new TypeError(`Expected the side to be raw or controller, got ${side}`)
if (!Number.isInteger(count) || count < AT_ONCE) throw new TypeError(`Expected a spawn count of at least ${AT_ONCE}, got ${process.argv[3]}`)

const provider = createNodePtyProvider()
const controller = side === 'controller' ? createPtyController({ provider }) : null
const exits = new ExitWaits()
controller?.on('exit', ({ ptyId }) => exits.exited(ptyId))

async function once(): Promise<void> {
  if (controller === null) {
    await rawExit(pty.spawn(FILE, ARGS, rawSpawnOptions()))
    return
  }
  const { id } = await controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
  await exits.exitOf(id)
}

async function run(n: number): Promise<void> {
  for (let done = 0; done < n; done += AT_ONCE) {
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, n - done) }, () => once()))
  }
}

const short = (url: string): string => url.replace(/^.*\/(dist|src|bench|node_modules)\//, '$1/').replace(/^node:/, 'node:')

await run(AT_ONCE)
const session = new Session()
session.connect()
await session.post('HeapProfiler.enable')
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 512,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
})
await run(count)
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } }
session.disconnect()

const bySite = new Map<string, number>()
let total = 0
const walk = (node: SamplingNode, caller: string): void => {
  const frame = node.callFrame
  const site = `${frame.functionName || '(anonymous)'} ${short(frame.url)}:${frame.lineNumber + 1}`
  if (node.selfSize > 0) {
    // Name a site by its caller too: a builtin's allocation (Map grow, Array push) means little alone.
    const key = frame.url === '' ? `${site} ← ${caller}` : site
    bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize)
    total += node.selfSize
  }
  for (const child of node.children) walk(child, site)
}
walk(profile.head, '(root)')

process.stdout.write(`${side}: ${count} spawns, ${(total / count / 1024).toFixed(1)} KiB allocated per spawn cycle (sampled)\n`)
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${String(Math.round(bytes / count)).padStart(7)} B  ${site}\n`)
}
await (controller !== null ? controller.dispose() : provider.dispose())
