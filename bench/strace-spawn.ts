/**
 * Syscalls per spawn, raw node-pty against the controller over the node-pty provider, for
 * `strace` (issue 18: every syscall on this VM is dear, and their count does not depend on the
 * load). Spawns `sh -c 'echo x'` N times sequentially through one side, and marks the moments
 * that cut each cycle into phases with a `stat` of a path that cannot exist, which strace shows:
 * `/ptykit-strace-mark/<side>/<i>/spawn` before the spawn call, `…/first-byte` at the first chunk
 * the listener gets, `…/exit` at the exit event. `bench/strace-summary.mjs` reads the trace.
 *
 *   npm run build
 *   strace -f -tt -o /tmp/trace.raw npx tsx --tsconfig bench/tsconfig.dist.json bench/strace-spawn.ts raw 50
 *   strace -f -tt -o /tmp/trace.ptykit npx tsx --tsconfig bench/tsconfig.dist.json bench/strace-spawn.ts ptykit 50
 *   node bench/strace-summary.mjs /tmp/trace.raw /tmp/trace.ptykit
 */
import { statSync } from 'node:fs'
import { createPtykitSide } from './ptykit-side.js'
import { pty, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'

const side = process.argv[2]
const count = Number(process.argv[3] ?? 50)
if ((side !== 'raw' && side !== 'ptykit') || !Number.isSafeInteger(count) || count < 1) {
  throw new Error('usage: strace-spawn.ts raw|ptykit [count]')
}

function mark(i: number, moment: 'spawn' | 'first-byte' | 'exit'): void {
  statSync(`/ptykit-strace-mark/${side}/${i}/${moment}`, { throwIfNoEntry: false })
}

const FILE = 'sh'
const ARGS = ['-c', 'echo x']

async function rawCycle(i: number): Promise<void> {
  mark(i, 'spawn')
  const p = pty.spawn(FILE, ARGS, rawSpawnOptions())
  let seen = false
  p.onData(() => {
    if (!seen) mark(i, 'first-byte')
    seen = true
  })
  await new Promise<void>((resolve) => {
    p.onExit(() => {
      mark(i, 'exit')
      resolve()
    })
  })
}

const ptykit = side === 'ptykit' ? createPtykitSide() : null

async function ptykitCycle(i: number): Promise<void> {
  const { controller } = ptykit!
  let id: string | null = null
  let seen = false
  const exited = new Promise<void>((resolve) => {
    const onData = (event: { ptyId: string }): void => {
      if (!seen && (id === null || event.ptyId === id)) mark(i, 'first-byte')
      seen = true
    }
    const onExit = (event: { ptyId: string }): void => {
      if (id !== null && event.ptyId !== id) return
      mark(i, 'exit')
      controller.off('data', onData)
      controller.off('exit', onExit)
      resolve()
    }
    controller.on('data', onData)
    controller.on('exit', onExit)
  })
  mark(i, 'spawn')
  const handle = await controller.spawn({ file: FILE, args: ARGS, cols: BENCH_COLS, rows: BENCH_ROWS })
  id = handle.id
  await exited
}

// A warm-up cycle (module loading, first-use work) is left out of the marks' numbering.
for (let i = -1; i < count; i++) {
  if (side === 'raw') await rawCycle(i)
  else await ptykitCycle(i)
}
await ptykit?.dispose()
