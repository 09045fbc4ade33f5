/**
 * What going around node-pty's JavaScript terminal would buy on concurrent spawns: raw node-pty's
 * `spawn` against a lean spawn over node-pty's own native `fork` (the environment built as node-pty
 * builds it, a `tty.ReadStream` on the master, the exit as node-pty reports it — after the stream
 * closes), 50 `sh -c 'exit 0'` at once per round, alternating in one process. The lean spawn is the
 * least any provider around node-pty's native module must do, so its ratio bounds what a provider
 * of ptykit's own could gain over node-pty's `UnixTerminal`. Not a test and not part of
 * `npm run bench`:
 *
 * ```sh
 * npx tsx bench/lean-spawn.ts [PAIRS=40]
 * ```
 */
import tty from 'node:tty'
import { nodePtyHelperPath, nodePtyNative } from './node-pty-native.js'
import { pty, rawExit, rawSpawnOptions, BENCH_COLS, BENCH_ROWS } from './raw-pty.js'
import { nowMs } from './stats.js'

const PAIRS = Number(process.argv[2] ?? 40)
const AT_ONCE = 50
const FILE = '/bin/sh'
const ARGS = ['-c', 'exit 0']
/** The host-terminal variables node-pty removes from an inherited `process.env`. */
const SANITIZED = new Set(['TMUX', 'TMUX_PANE', 'STY', 'WINDOW', 'WINDOWID', 'TERMCAP', 'COLUMNS', 'LINES'])

function environment(cwd: string): string[] {
  const pairs: string[] = []
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !SANITIZED.has(key) && key !== 'PWD' && key !== 'TERM') pairs.push(`${key}=${value}`)
  }
  pairs.push(`PWD=${cwd}`, 'TERM=xterm')
  return pairs
}

/** Resolves once the child exited and its master stream closed (node-pty's exit rule). */
function leanSpawn(): Promise<void> {
  return new Promise((resolve) => {
    let closed = false
    let exited = false
    const cwd = process.cwd()
    const forked = nodePtyNative.fork(FILE, ARGS, environment(cwd), cwd, BENCH_COLS, BENCH_ROWS, -1, -1, true, nodePtyHelperPath, () => {
      exited = true
      if (closed) resolve()
    })
    const master = new tty.ReadStream(forked.fd)
    master.setEncoding('utf8')
    master.on('data', () => undefined)
    const close = (): void => {
      if (closed) return
      closed = true
      master.destroy()
      if (exited) resolve()
    }
    // The master reads EIO once the child is gone.
    master.on('error', close)
    master.on('close', close)
  })
}

async function round(spawnOne: () => Promise<unknown>): Promise<number> {
  const start = nowMs()
  await Promise.all(Array.from({ length: AT_ONCE }, spawnOne))
  return AT_ONCE / ((nowMs() - start) / 1000)
}

const raw = (): Promise<unknown> => rawExit(pty.spawn(FILE, ARGS, rawSpawnOptions()))
for (let i = 0; i < 4; i++) {
  await round(raw)
  await round(leanSpawn)
}
const ratios: number[] = []
for (let pair = 0; pair < PAIRS; pair++) {
  const [first, second] = pair % 2 === 0 ? [raw, leanSpawn] : [leanSpawn, raw]
  const a = await round(first)
  const b = await round(second)
  ratios.push(pair % 2 === 0 ? b / a : a / b)
}
ratios.sort((a, b) => a - b)
const at = (q: number): string => (ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))] ?? Number.NaN).toFixed(3)
process.stdout.write(`lean spawn ÷ raw node-pty, concurrent spawns/s over ${PAIRS} pairs: median ${at(0.5)} (p10 ${at(0.1)}, p90 ${at(0.9)})\n`)
