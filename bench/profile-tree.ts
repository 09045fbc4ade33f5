/**
 * A `.cpuprofile` (from `node --cpu-prof`) as a call tree under one function, merged over every
 * call of it and divided per spawn: where that function's inclusive time goes, a few levels deep.
 * `bench/profile-summary.ts` gives flat self and inclusive times; this shows which callee holds
 * them. Not a test and not part of `npm run bench`, e.g.
 *
 * ```sh
 * node --import tsx --cpu-prof --cpu-prof-interval 50 --cpu-prof-dir=/tmp/prof bench/profile-spawn.ts controller 1500
 * npx tsx bench/profile-tree.ts /tmp/prof/CPU.*.0.001.cpuprofile 1520 spawnFresh 6 2
 * ```
 *
 * Arguments: the profile, the number of spawns to divide by, the root function's name, the depth
 * (default 5), the smallest time shown in µs per spawn (default 2). A sample's cost is the
 * interval before it, so functions that write a page first after a fork (13–15 µs a fault on
 * this VM) look dearer than they are: read the tree with `bench/page-fault-sites.py` beside it.
 */
import { readFileSync } from 'node:fs'

type CallFrame = { functionName: string; url: string; lineNumber: number }
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] }
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }
type Merged = { label: string; us: number; children: Map<string, Merged> }

const [file, spawnsArg, rootName, depthArg, minArg] = process.argv.slice(2)
if (file === undefined || rootName === undefined) throw new TypeError('usage: profile-tree.ts PROFILE SPAWNS ROOT [DEPTH=5] [MIN_US=2]')
const spawns = Number(spawnsArg)
const maxDepth = Number(depthArg ?? 5)
const minUs = Number(minArg ?? 2)
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile

const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const selfUs = new Map<number, number>()
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const short = (url: string): string => url.replace(/^.*\/(dist|node_modules|src|bench)\//, '$1/').replace('file://', '')
const label = (node: ProfileNode): string => `${node.callFrame.functionName || '(anonymous)'} ${short(node.callFrame.url)}:${node.callFrame.lineNumber}`

const inclusive = new Map<number, number>()
function inclusiveUs(node: ProfileNode): number {
  const known = inclusive.get(node.id)
  if (known !== undefined) return known
  let us = selfUs.get(node.id) ?? 0
  for (const child of node.children ?? []) us += inclusiveUs(byId.get(child) as ProfileNode)
  inclusive.set(node.id, us)
  return us
}

const childOf = (parent: Merged, node: ProfileNode): Merged => {
  const key = label(node)
  let merged = parent.children.get(key)
  if (merged === undefined) {
    merged = { label: key, us: 0, children: new Map() }
    parent.children.set(key, merged)
  }
  return merged
}
function mergeInto(target: Merged, node: ProfileNode, depth: number): void {
  target.us += inclusiveUs(node)
  if (depth >= maxDepth) return
  for (const child of node.children ?? []) {
    const childNode = byId.get(child) as ProfileNode
    mergeInto(childOf(target, childNode), childNode, depth + 1)
  }
}

const root: Merged = { label: 'root', us: 0, children: new Map() }
// Iterative walk: a profile's tree can be deeper than the stack allows. Calls of the root inside
// another call of it are counted once, in the outer one.
const pending: { node: ProfileNode; inside: boolean }[] = [{ node: profile.nodes[0] as ProfileNode, inside: false }]
while (pending.length > 0) {
  const { node, inside } = pending.pop() as { node: ProfileNode; inside: boolean }
  const isRoot = !inside && node.callFrame.functionName === rootName
  if (isRoot) mergeInto(childOf(root, node), node, 0)
  for (const child of node.children ?? []) pending.push({ node: byId.get(child) as ProfileNode, inside: inside || isRoot })
}

function print(merged: Merged, indent: number): void {
  for (const child of [...merged.children.values()].sort((a, b) => b.us - a.us)) {
    const perSpawn = child.us / spawns
    if (perSpawn < minUs) continue
    process.stdout.write(`${' '.repeat(indent)}${perSpawn.toFixed(1).padStart(8)} µs  ${child.label}\n`)
    print(child, indent + 2)
  }
}
print(root, 0)
