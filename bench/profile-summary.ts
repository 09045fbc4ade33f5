/**
 * Summarises a `.cpuprofile` (from `node --cpu-prof`): self time per function and total
 * (inclusive) time of the functions whose source is ptykit's, per spawn. Not a test; see
 * `bench/profile-spawn.ts` for how to make the profile.
 *
 * ```sh
 * npx tsx bench/profile-summary.ts PROFILE.cpuprofile [SPAWNS=1] [TOP=25] [FUNCTION…]
 * ```
 *
 * Each FUNCTION named (e.g. `open`, `close`) also gets the stacks its self time was spent under,
 * as the chain of its nearest callers (up to eight frames), so a native call can be attributed.
 *
 * "ptykit self" is self time in files under `src/` or `dist/` (the bench tools run the built
 * package); "under ptykit frames" also counts what they call (node:fs, crypto…, and node-pty's own
 * spawn), each sample counted once however many ptykit frames its stack holds. "ptykit's own
 * work" is the latter without what raw node-pty pays as well: samples under node-pty's frames (its
 * spawn, its fork) or under the destroy of its master socket (which the drain only defers).
 */
import { readFileSync } from 'node:fs'

type CallFrame = { functionName: string; url: string; lineNumber: number }
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] }
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const [file, spawnsArg, topArg, ...traced] = process.argv.slice(2)
if (file === undefined) throw new TypeError('Expected a .cpuprofile path as the first argument')
const spawns = Number(spawnsArg ?? 1)
const top = Number(topArg ?? 25)
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile

const byId = new Map<number, ProfileNode>()
const parentOf = new Map<number, number>()
for (const node of profile.nodes) {
  byId.set(node.id, node)
  for (const child of node.children ?? []) parentOf.set(child, node.id)
}

const isOurs = (url: string): boolean => (url.includes('/src/') || url.includes('/dist/')) && !url.includes('node_modules')
const short = (url: string): string => url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')
const label = (frame: CallFrame): string => `${frame.functionName || "(anonymous)"} ${short(frame.url)}`

const selfUs = new Map<string, number>()
const tracedStacks = new Map<string, number>()
const inclusiveUs = new Map<string, number>()
let oursSelf = 0
let oursInclusive = 0
let oursOwn = 0
/** Frames whose work raw node-pty pays too (see the header). */
const isRawsToo = (frame: CallFrame): boolean =>
  frame.url.includes('node_modules/node-pty/') || (frame.functionName === 'destroy' && frame.url.endsWith('streams/destroy'))
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0
  const node = byId.get(profile.samples[i] as number)
  if (node === undefined) continue
  selfUs.set(label(node.callFrame), (selfUs.get(label(node.callFrame)) ?? 0) + dt)
  if (isOurs(node.callFrame.url)) oursSelf += dt
  if (traced.includes(node.callFrame.functionName)) {
    const chain: string[] = []
    for (let at = parentOf.get(node.id); at !== undefined && chain.length < 8; at = parentOf.get(at)) chain.push(label((byId.get(at) as ProfileNode).callFrame))
    const key = `${node.callFrame.functionName} ← ${chain.join(' ← ')}`
    tracedStacks.set(key, (tracedStacks.get(key) ?? 0) + dt)
  }
  const seen = new Set<string>()
  let underOurs = false
  let underRaws = false
  for (let at: number | undefined = node.id; at !== undefined; at = parentOf.get(at)) {
    const frame = (byId.get(at) as ProfileNode).callFrame
    if (!underOurs && isRawsToo(frame)) underRaws = true
    if (isOurs(frame.url)) {
      underOurs = true
      seen.add(label(frame))
    }
  }
  // The inclusive list counts ptykit's own work only (see the header).
  if (!underRaws) for (const key of seen) inclusiveUs.set(key, (inclusiveUs.get(key) ?? 0) + dt)
  if (underOurs) oursInclusive += dt
  if (underOurs && !underRaws) oursOwn += dt
}

const perSpawn = (us: number): string => `${(us / 1000 / spawns).toFixed(3)} ms`
const print = (title: string, map: Map<string, number>, filter: (key: string) => boolean): void => {
  process.stdout.write(`\n${title}\n`)
  for (const [key, us] of [...map].filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`  ${perSpawn(us).padStart(10)}  ${key}\n`)
  }
}
const totalUs = profile.endTime - profile.startTime
process.stdout.write(`profile ${(totalUs / 1000).toFixed(0)} ms; per spawn (÷ ${spawns}): total ${perSpawn(totalUs)}, ptykit self ${perSpawn(oursSelf)}, under ptykit frames ${perSpawn(oursInclusive)}, ptykit's own work ${perSpawn(oursOwn)}\n`)
print('self time, top functions', selfUs, () => true)
print("inclusive time of ptykit functions (ptykit's own work only)", inclusiveUs, () => true)
if (traced.length > 0) print(`stacks of ${traced.join(', ')}`, tracedStacks, () => true)
