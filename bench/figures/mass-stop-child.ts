/**
 * Child process of the mass-stop figures (issues 13 and 18), in a fresh Node process so that 1 000
 * PTYs, their fds and their memory never touch the rest of the benchmark. Three phases, each with
 * `n` PTYs, every process carrying the run's marker so that `/proc` tells what survived:
 *
 * 1. **kill**: `n` idle `/bin/sleep` PTYs through raw node-pty, all `kill()`ed at once, then `n`
 *    through the controller + node-pty provider, all `controller.kill()`ed at once: kill → exit
 *    times, the controller's exit causes and `error` codes.
 * 2. **dispose**: `n` PTYs mixing plain, HUP-ignoring and HUP+TERM-ignoring trees, each ready
 *    (its trap set and its background `sleep` started), then `controller.dispose()`: processes of
 *    the run still alive in `/proc` when it resolves, and whether `error` named them by pid.
 * 3. **scale**: `n` idle PTYs on one controller: RSS, heap, fds and event-loop lag before and after,
 *    a `listProcesses()` and a concurrent `stopAndWait` of all of them timed, survivors counted.
 *
 * Usage: mass-stop-child.ts <n> <rounds> <settleMs> <mark> <stops|scale>: phases 1–2 (`stops`) or
 * phase 3 (`scale`, in a process of its own so that it starts from a clean fd and PTY table),
 * `rounds` times, waiting
 * `settleMs` where a phase lets things settle (idle before a kill, the lag window). Prints one JSON
 * line: an array of {@link MassStopChildResult}, one per round.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { pty, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'
import { median, nowMs } from '../stats.js'
import { MARK_VARIABLE, killMarkedProcesses, markedProcesses, SPAWN_CONCURRENCY } from './mass-stop-processes.js'

/** Longest wait for all exits of one phase: far above the stop budgets, so only a hang trips it. */
export const PHASE_TIMEOUT_MS = 60_000

/** The three trees of the dispose phase, in rotation; each prints `ready` once its trap is set. */
export const DISPOSE_TREES = [
  { kind: 'plain', args: ['-c', 'echo ready; exec /bin/sleep 600'] },
  { kind: 'hup-ignoring', args: ['-c', 'trap "" HUP; /bin/sleep 600 & echo ready; wait'] },
  { kind: 'hup-term-ignoring', args: ['-c', 'trap "" HUP TERM; /bin/sleep 600 & echo ready; wait'] },
] as const

/** What the child prints. */
export type MassStopChildResult = {
  n: number
  /** Phase 1 (`stops` runs only). */
  kill?: {
    /** Median kill call → exit event, ms, raw node-pty. */
    rawMedianMs: number
    /** Raw PTYs whose exit event arrived. */
    rawExited: number
    /** Median `controller.kill` → first `exit` event, ms. */
    ptykitMedianMs: number
    /** First-exit causes of the controller's PTYs, by `kind` or `unknown/<reason>`. */
    causes: Record<string, number>
    /** PTYs that ever got an `unknown/stop_unverified` exit (also when a real exit followed). */
    stopUnverified: number
    /** Controller `error` events, by code. */
    errors: Record<string, number>
    /** Processes of the phase still alive after all exits (before the final sweep). */
    survivors: number
  }
  /** Phase 2 (`stops` runs only). */
  dispose?: {
    disposeMs: number
    /** Marked processes alive when `dispose()` resolved. */
    survivors: number
    /** Of those, how many a controller `error` named by pid. */
    survivorsNamed: number
    errors: Record<string, number>
    /** The first few error messages, for the notes. */
    errorSamples: string[]
  }
  /** Phase 3 (`scale` runs only). */
  scale?: {
    before: { rss: number; heapUsed: number; fds: number; lagP99Ms: number; lagMaxMs: number }
    after: { rss: number; heapUsed: number; fds: number; lagP99Ms: number; lagMaxMs: number }
    listMs: number
    listed: number
    stopAllMs: number
    stoppedTrue: number
    /** Marked processes alive after every `stopAndWait` resolved. */
    left: number
  }
}

type Controller = ReturnType<typeof createPtyController>

const count = (map: Record<string, number>, key: string): void => {
  map[key] = (map[key] ?? 0) + 1
}

/** Runs `task` over `items` with at most `limit` in flight. */
async function inBatches<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      results[i] = await task(items[i] as T, i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${PHASE_TIMEOUT_MS} ms`)), PHASE_TIMEOUT_MS)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** How long a phase lets things settle (idle before the kills, the event-loop lag window); from argv. */
let settleMs = 500

/** Progress on stderr (shown by the bench when the child fails or times out). */
const progress = (line: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${line}\n`)
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function newController(): Controller {
  return createPtyController({ provider: createNodePtyProvider() })
}

async function rawKillPhase(n: number, env: Record<string, string>): Promise<{ medianMs: number; exited: number }> {
  const options = { ...rawSpawnOptions(), env: { ...process.env, ...env } }
  const ptys = Array.from({ length: n }, () => pty.spawn('/bin/sleep', ['600'], options))
  const exits = ptys.map((p) => new Promise<number>((resolve) => p.onExit(() => resolve(nowMs()))))
  await sleep(settleMs) // every child has exec'd sleep: the kills hit idle processes
  const killedAt = ptys.map((p) => {
    const at = nowMs()
    p.kill()
    return at
  })
  const exitedAt = await withTimeout(Promise.all(exits), 'raw node-pty kills')
  return { medianMs: median(exitedAt.map((at, i) => at - (killedAt[i] as number))), exited: exitedAt.length }
}

async function ptykitKillPhase(n: number, env: Record<string, string>): Promise<Omit<NonNullable<MassStopChildResult['kill']>, 'rawMedianMs' | 'rawExited' | 'survivors'>> {
  const controller = newController()
  const errors: Record<string, number> = {}
  const causes: Record<string, number> = {}
  const firstExit = new Map<string, number>()
  const unverified = new Set<string>()
  const waiting = new Map<string, () => void>()
  controller.on('error', (error) => count(errors, error.code))
  controller.on('exit', (event) => {
    if (event.cause.kind === 'unknown' && event.cause.reason === 'stop_unverified') unverified.add(event.ptyId)
    if (firstExit.has(event.ptyId)) return
    firstExit.set(event.ptyId, nowMs())
    count(causes, event.cause.kind === 'unknown' ? `unknown/${event.cause.reason}` : event.cause.kind)
    waiting.get(event.ptyId)?.()
  })
  try {
    const ids = await inBatches(Array.from({ length: n }), SPAWN_CONCURRENCY, async () => {
      const handle = await controller.spawn({ file: '/bin/sleep', args: ['600'], cols: BENCH_COLS, rows: BENCH_ROWS, env })
      return handle.id
    })
    progress(`  ${ids.length} spawned`)
    const exits = ids.map((id) => new Promise<void>((resolve) => (firstExit.has(id) ? resolve() : waiting.set(id, resolve))))
    await sleep(settleMs)
    const killedAt = ids.map((id) => {
      const at = nowMs()
      if (!controller.kill(id)) throw new Error(`controller.kill(${id}) answered false for a live PTY`)
      return at
    })
    progress('  killed')
    await withTimeout(Promise.all(exits), 'controller kills')
    progress('  all exited')
    // A stop_unverified published at the controller's deadline can be followed by the real exit:
    // give the provider's escalation time to finish before counting.
    await sleep(2 * settleMs)
    return {
      ptykitMedianMs: median(ids.map((id, i) => (firstExit.get(id) as number) - (killedAt[i] as number))),
      causes,
      stopUnverified: unverified.size,
      errors,
    }
  } finally {
    await controller.dispose()
  }
}

async function disposePhase(n: number, env: Record<string, string>, mark: string): Promise<NonNullable<MassStopChildResult['dispose']>> {
  const controller = newController()
  const errors: Record<string, number> = {}
  const messages: string[] = []
  const describe = (error: unknown): string => {
    if (!(error instanceof Error)) return String(error)
    return error.cause === undefined ? error.message : `${error.message} (cause: ${describe(error.cause)})`
  }
  controller.on('error', (error) => {
    count(errors, error.code)
    messages.push(describe(error))
  })
  const ready = new Map<string, () => void>()
  const seen = new Set<string>()
  controller.on('data', (event) => {
    controller.acknowledgeData(event.ptyId, event.data.length)
    if (!event.data.includes('ready')) return
    seen.add(event.ptyId)
    ready.get(event.ptyId)?.()
  })
  const ids = await inBatches(Array.from({ length: n }), SPAWN_CONCURRENCY, async (_, i) => {
    const tree = DISPOSE_TREES[i % DISPOSE_TREES.length] as (typeof DISPOSE_TREES)[number]
    const handle = await controller.spawn({ file: '/bin/sh', args: [...tree.args], cols: BENCH_COLS, rows: BENCH_ROWS, env })
    return handle.id
  })
  await withTimeout(
    Promise.all(ids.map((id) => new Promise<void>((resolve) => (seen.has(id) ? resolve() : ready.set(id, resolve))))),
    'the dispose phase trees becoming ready',
  )
  progress(`  ${ids.length} ready`)
  const t0 = nowMs()
  await withTimeout(controller.dispose(), 'controller.dispose()')
  const disposeMs = nowMs() - t0
  const alive = markedProcesses(mark)
  const named = alive.filter((pid) => messages.some((m) => new RegExp(`\\b${pid}\\b`).test(m)))
  return { disposeMs, survivors: alive.length, survivorsNamed: named.length, errors, errorSamples: messages.slice(0, 3) }
}

function snapshot(): Promise<NonNullable<MassStopChildResult['scale']>['before']> {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  return sleep(2 * settleMs).then(() => {
    histogram.disable()
    const memory = process.memoryUsage()
    return {
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      fds: readdirSync('/proc/self/fd').length,
      lagP99Ms: histogram.percentile(99) / 1e6,
      lagMaxMs: histogram.max / 1e6,
    }
  })
}

async function scalePhase(n: number, env: Record<string, string>, mark: string): Promise<NonNullable<MassStopChildResult['scale']>> {
  const controller = newController()
  try {
    controller.on('data', (event) => controller.acknowledgeData(event.ptyId, event.data.length))
    const before = await snapshot()
    const ids = await inBatches(Array.from({ length: n }), SPAWN_CONCURRENCY, async () => {
      const handle = await controller.spawn({ file: '/bin/sleep', args: ['600'], cols: BENCH_COLS, rows: BENCH_ROWS, env })
      return handle.id
    })
    progress(`  ${ids.length} spawned`)
    const after = await snapshot()
    let t0 = nowMs()
    const listing = await controller.listProcesses()
    const listMs = nowMs() - t0
    progress('  listed')
    t0 = nowMs()
    const stopped = await Promise.all(ids.map((id) => controller.stopAndWait(id)))
    const stopAllMs = nowMs() - t0
    return {
      before,
      after,
      listMs,
      listed: listing.length,
      stopAllMs,
      stoppedTrue: stopped.filter((s) => s).length,
      left: markedProcesses(mark).length,
    }
  } finally {
    await controller.dispose()
  }
}

async function main(): Promise<void> {
  const [n, rounds, settle] = process.argv.slice(2, 5).map(Number) as [number, number, number]
  const mark = process.argv[5]
  const phases = process.argv[6]
  if (phases !== 'stops' && phases !== 'scale') throw new TypeError(`Expected the phases argument to be stops or scale, got ${String(phases)}`)
  for (const [name, value] of [['n', n], ['rounds', rounds], ['settleMs', settle]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new TypeError(`Expected the ${name} argument to be a positive integer, got ${String(value)}`)
  }
  if (mark === undefined || mark.length === 0) throw new TypeError('Expected the mark argument')
  settleMs = settle
  const env = { [MARK_VARIABLE]: mark }
  const results: MassStopChildResult[] = []
  for (let round = 0; round < rounds; round++) results.push(phases === 'stops' ? await runStops(n, env, mark) : { n, scale: await runScale(n, env, mark) })
  process.stdout.write(`${JSON.stringify(results)}\n`)
}

async function runStops(n: number, env: Record<string, string>, mark: string): Promise<MassStopChildResult> {
  progress(`raw kill phase, ${n} PTYs; ${ptyUsage()}`)
  const raw = await rawKillPhase(n, env)
  progress(`controller kill phase`)
  const ptykit = await ptykitKillPhase(n, env)
  // Each phase starts from an empty table: what one left behind must not count against the next.
  const killSurvivors = killMarkedProcesses(mark)
  progress(`dispose phase; ${ptyUsage()}`)
  const dispose = await disposePhase(n, env, mark)
  killMarkedProcesses(mark)
  return { n, kill: { rawMedianMs: raw.medianMs, rawExited: raw.exited, ...ptykit, survivors: killSurvivors }, dispose }
}

async function runScale(n: number, env: Record<string, string>, mark: string): Promise<NonNullable<MassStopChildResult['scale']>> {
  progress(`scale phase, ${n} PTYs; ${ptyUsage()}`)
  const scale = await scalePhase(n, env, mark)
  killMarkedProcesses(mark)
  return scale
}

/** The machine's PTYs in use and this process's open fds, for progress lines (forkpty fails at pty/max). */
function ptyUsage(): string {
  try {
    return `PTYs in use ${readFileSync('/proc/sys/kernel/pty/nr', 'utf8').trim()}/${readFileSync('/proc/sys/kernel/pty/max', 'utf8').trim()}, own fds ${readdirSync('/proc/self/fd').length}`
  } catch {
    return 'PTY usage unknown'
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
