/**
 * Child process of the idle-memory figure (run with `--expose-gc` and a pinned young generation,
 * see `idle-memory.ts`): opens N idle PTYs on one side only, in two halves, and prints the
 * parent's RSS, V8 heap (used and committed) and external memory before, at the half and at the
 * end, as one JSON line. The figure takes the slope over the second half, so what V8 and malloc
 * grow once during the first burst does not count as a cost per idle PTY.
 *
 * Usage: idle-memory-child.ts <raw|ptykit> <ptys> <settleMs>
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createPtykitSide } from '../ptykit-side.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from '../raw-pty.js'

/** The idle child: `sleep` prints nothing and waits, so only the PTY's own cost shows. */
const IDLE = { file: '/bin/sleep', args: ['600'] }

/** A memory reading after two full collections, bytes. */
export type MemoryReading = {
  /** Resident set size. */
  rss: number
  /** V8 heap in use (live objects after the collections). */
  heapUsed: number
  /** V8 heap committed (`heapTotal`: pages V8 holds, used or not). */
  heapTotal: number
  /** Memory of JS objects held outside V8's heap (Buffers, ArrayBuffers). */
  external: number
}

/** What the child prints. */
export type IdleMemoryChildResult = {
  /** `raw` or `ptykit`. */
  side: string
  /** Idle PTYs opened. */
  ptys: number
  /** Before opening them (after a warm-up spawn). */
  base: MemoryReading
  /** With the first half (`Math.floor(ptys / 2)`) open and settled. */
  half: MemoryReading
  /** With all of them open and settled. */
  top: MemoryReading
}

/**
 * How long a reading waits after its collections. V8 hands freed pages back to the OS from a
 * background thread after a GC (its unmapper); reading at once counted pages about to go, by
 * megabytes at a time (measured with `/proc/self/smaps`), which swamped a slope of a few KiB per PTY.
 */
const POST_GC_SETTLE_MS = 100

async function read(): Promise<MemoryReading> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('idle-memory-child needs --expose-gc')
  gc()
  gc()
  await sleep(POST_GC_SETTLE_MS)
  const m = process.memoryUsage()
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external }
}

async function main(): Promise<void> {
  const [side, ptysArg, settleArg] = process.argv.slice(2)
  const ptys = Number(ptysArg)
  const settleMs = Number(settleArg)
  if (side !== 'raw' && side !== 'ptykit') throw new TypeError(`Expected the side argument to be raw or ptykit, got ${String(side)}`)
  let result: IdleMemoryChildResult
  if (side === 'raw') {
    // Warm-up spawn: node-pty's lazily created state and JIT code are not a per-PTY cost.
    const warm = pty.spawn('/bin/sh', ['-c', 'exit 0'], rawSpawnOptions())
    await rawExit(warm)
    await sleep(settleMs)
    const base = await read()
    const open: ReturnType<typeof pty.spawn>[] = []
    const openUpTo = async (count: number): Promise<MemoryReading> => {
      while (open.length < count) {
        const p = pty.spawn(IDLE.file, IDLE.args, rawSpawnOptions())
        p.onData(() => {})
        open.push(p)
      }
      await sleep(settleMs)
      return await read()
    }
    const half = await openUpTo(Math.floor(ptys / 2))
    result = { side, ptys, base, half, top: await openUpTo(ptys) }
    const exits = open.map((p) => rawExit(p))
    for (const p of open) p.kill('SIGKILL')
    await Promise.all(exits)
  } else {
    const s = createPtykitSide()
    const warm = await s.controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'], cols: BENCH_COLS, rows: BENCH_ROWS })
    await s.tracker.get(warm.id).exited
    s.tracker.forget(warm.id)
    await sleep(settleMs)
    const base = await read()
    const ids: string[] = []
    const openUpTo = async (count: number): Promise<MemoryReading> => {
      while (ids.length < count) {
        const h = await s.controller.spawn({ file: IDLE.file, args: IDLE.args, cols: BENCH_COLS, rows: BENCH_ROWS })
        ids.push(h.id)
      }
      await sleep(settleMs)
      return await read()
    }
    const half = await openUpTo(Math.floor(ptys / 2))
    result = { side, ptys, base, half, top: await openUpTo(ptys) }
    for (const id of ids) await s.controller.kill(id)
    await Promise.all(ids.map((id) => s.tracker.get(id).exited))
    await s.dispose()
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
