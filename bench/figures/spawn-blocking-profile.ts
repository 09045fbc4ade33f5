/**
 * What a spawn through the pty host costs the app's event loop, from a CPU profile rather than a
 * wall clock: the app's JS thread is sampled (V8's profiler, a fine interval) over a batch of
 * spawns of `sh -c 'exit 0'` separated by idle gaps, and every stretch of consecutive non-idle
 * samples is one task the app ran. Per spawn it reports the longest task and the total CPU the
 * app's thread spent, and it names what ran in the longest tasks (self time by function).
 *
 * Unlike the spawn-blocking figure's `setImmediate` probe (which spins the app's event loop, so it
 * also measures whatever descheduled the app on a loaded machine), idle time here is V8's own
 * `(idle)` — the thread waiting in epoll — so load does not inflate the figures much. On a loaded
 * machine V8's sampling thread is starved as well (samples several times sparser than asked, short
 * tasks missed): there, `perf record -F 20000 -g -t <app pid>` of an app started with
 * `--perf-basic-prof --interpreted-frames-native-stack` samples only on-CPU time and names the JS
 * frames, which makes it the more reliable tool.
 *
 * Usage (the published build, as the bench: `npm run build` first):
 *   npx tsx --tsconfig bench/tsconfig.dist.json bench/figures/spawn-blocking-profile.ts [--side pty-host|node-pty] [--spawns N]
 *   [--heap-mib N] [--interval-us N] [--out FILE.cpuprofile]
 * Prints a JSON summary on stdout (see {@link SpawnProfileSummary}).
 */
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { parseArgs } from 'node:util'
import { createPtyHostSide } from '../pty-host-side.js'
import { createPtykitSide, type PtykitSide } from '../ptykit-side.js'
import { BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { assertBenchResolvesToDist } from '../built-package.js'

/** Elements per ballast array (~2 MiB of heap each), as in the spawn-blocking child (which runs on import). */
const BALLAST_ARRAY_LENGTH = 1 << 17

/** Idle time between two profiled spawns, so their tasks never merge. */
export const PROFILE_IDLE_GAP_MS = 30

/** Unprofiled spawns first: JIT, lazy compilation and the host's first spawn are not the steady state. */
export const PROFILE_WARMUP_SPAWNS = 20

/** Samples closer than this many sampling intervals to each other, with no idle sample between, belong to one task. */
const TASK_JOIN_SLACK_FACTOR = 2.5

type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
type Profile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

/** One task: consecutive non-idle samples. */
type Task = { start: number; end: number; samples: number[] }

/** What the script prints. */
export type SpawnProfileSummary = {
  side: string
  spawns: number
  intervalUs: number
  /** Per spawn (from the spawn call to the exit event), the longest task, ms. */
  longestTaskMs: number[]
  /** Per spawn, the app thread's total non-idle time, ms. */
  busyMs: number[]
  /** Per spawn, the number of tasks. */
  tasks: number[]
  /** Self time (ms, summed over the spawns) by function, within each spawn's longest task. */
  longestTaskSelf: [string, number][]
  /** Self time (ms, summed) by function over every task of every spawn window. */
  windowSelf: [string, number][]
  /** Inclusive time (ms, summed) by function within the longest tasks. */
  longestTaskInclusive: [string, number][]
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function spawnOnce(side: PtykitSide): Promise<void> {
  const handle = await side.controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'], cols: BENCH_COLS, rows: BENCH_ROWS })
  await side.tracker.get(handle.id).exited
  side.tracker.forget(handle.id)
}

const ballast: unknown[] = []

async function main(): Promise<void> {
  // The app side and the pty host (dist/pty-host/host-main.js) must be the same build.
  assertBenchResolvesToDist()
  const { values } = parseArgs({
    options: {
      side: { type: 'string', default: 'pty-host' },
      spawns: { type: 'string', default: '40' },
      'heap-mib': { type: 'string', default: '40' },
      'interval-us': { type: 'string', default: '50' },
      out: { type: 'string' },
    },
  })
  const spawns = Number(values.spawns)
  const intervalUs = Number(values['interval-us'])
  const heapTarget = Number(values['heap-mib']) * 1024 * 1024
  while (process.memoryUsage().heapUsed + BALLAST_ARRAY_LENGTH * 8 <= heapTarget) ballast.push(new Array<number>(BALLAST_ARRAY_LENGTH).fill(0.5))
  const side = values.side === 'node-pty' ? createPtykitSide() : createPtyHostSide()
  for (let i = 0; i < PROFILE_WARMUP_SPAWNS; i++) await spawnOnce(side)

  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs })
  await session.post('Profiler.start')
  const windows: { start: number; end: number }[] = []
  await sleep(PROFILE_IDLE_GAP_MS)
  for (let i = 0; i < spawns; i++) {
    const start = Number(process.hrtime.bigint() / 1000n)
    await spawnOnce(side)
    windows.push({ start, end: Number(process.hrtime.bigint() / 1000n) })
    await sleep(PROFILE_IDLE_GAP_MS)
  }
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile }
  session.disconnect()
  await side.dispose()
  if (values.out !== undefined) writeFileSync(values.out, JSON.stringify(profile))
  process.stdout.write(`${JSON.stringify(summarize(profile, windows, values.side ?? 'pty-host', intervalUs))}\n`)
}

/** Splits the profile into tasks and attributes them to the spawn windows. */
function summarize(profile: Profile, windows: { start: number; end: number }[], side: string, intervalUs: number): SpawnProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id))
  // Sample times, absolute µs on the monotonic clock (the same clock as process.hrtime).
  const times: number[] = []
  let t = profile.startTime
  for (const delta of profile.timeDeltas) times.push((t += delta))
  const tasks: Task[] = []
  let current: Task | null = null
  for (let i = 0; i < profile.samples.length; i++) {
    const time = times[i]!
    if (idle.has(profile.samples[i]!)) {
      current = null
      continue
    }
    if (current !== null && time - current.end <= intervalUs * TASK_JOIN_SLACK_FACTOR) {
      current.end = time
      current.samples.push(i)
    } else {
      current = { start: time, end: time, samples: [i] }
      tasks.push(current)
    }
  }
  // A sample stands for the time up to the next one.
  const weight = (i: number): number => ((times[i + 1] ?? times[i]!) - times[i]!) / 1000
  const taskMs = (task: Task): number => task.samples.reduce((sum, i) => sum + weight(i), 0)
  const add = (into: Map<string, number>, key: string, ms: number): void => {
    into.set(key, (into.get(key) ?? 0) + ms)
  }
  const longestSelf = new Map<string, number>()
  const longestInclusive = new Map<string, number>()
  const windowSelf = new Map<string, number>()
  const summary: SpawnProfileSummary = { side, spawns: windows.length, intervalUs, longestTaskMs: [], busyMs: [], tasks: [], longestTaskSelf: [], windowSelf: [], longestTaskInclusive: [] }
  for (const window of windows) {
    const inWindow = tasks.filter((task) => task.end >= window.start && task.start <= window.end)
    let longest: Task | null = null
    for (const task of inWindow) if (longest === null || taskMs(task) > taskMs(longest)) longest = task
    summary.longestTaskMs.push(longest === null ? 0 : taskMs(longest))
    summary.busyMs.push(inWindow.reduce((sum, task) => sum + taskMs(task), 0))
    summary.tasks.push(inWindow.length)
    for (const task of inWindow) for (const i of task.samples) add(windowSelf, label(byId.get(profile.samples[i]!)!), weight(i))
    if (longest === null) continue
    for (const i of longest.samples) {
      const leaf = profile.samples[i]!
      add(longestSelf, label(byId.get(leaf)!), weight(i))
      const seen = new Set<string>()
      for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
        const name = label(byId.get(id)!)
        if (!seen.has(name)) add(longestInclusive, name, weight(i))
        seen.add(name)
      }
    }
  }
  const top = (map: Map<string, number>): [string, number][] =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([name, ms]) => [name, Number((ms / windows.length).toFixed(4))])
  summary.longestTaskSelf = top(longestSelf)
  summary.windowSelf = top(windowSelf)
  summary.longestTaskInclusive = top(longestInclusive)
  summary.longestTaskMs = summary.longestTaskMs.map((ms) => Number(ms.toFixed(3)))
  summary.busyMs = summary.busyMs.map((ms) => Number(ms.toFixed(3)))
  return summary
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
