/**
 * Measures the exit drain: for children that write SIZE bytes and exit at once, how many runs lose
 * part of their output, and what spawn → exit costs, for four variants:
 *
 * - `raw`: node-pty alone;
 * - `provider-undrained`: the provider with `drainOutputAtExit: false`;
 * - `provider`: the provider as shipped (slave held; on Linux the tail read out of the master at
 *   the death, elsewhere or while paused the end-of-output marker);
 * - `reference`: the baseline's mitigation (slave held, closed once the child is a zombie or gone
 *   and no output came for 10 ms; polled every 5 ms).
 *
 * Not a test (no assertion): run it with `npx tsx bench/measure-exit-drain.ts [RUNS=100]
 * [sizes=0,10000,100000,300000,1000000]`. The figures in docs/node-pty-provider.md come from it.
 */
import { closeSync, constants, openSync, readFileSync } from 'node:fs'
import { spawn as rawSpawn } from 'node-pty'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'

const RUNS = Number(process.argv[2] ?? 100)
const SIZES = (process.argv[3] ?? '0,10000,100000,300000,1000000').split(',').map(Number)
const now = (): number => Number(process.hrtime.bigint()) / 1e6
const script = (size: number): string => (size === 0 ? 'exit 0' : `head -c ${size} /dev/zero | tr '\\0' a`)
const opts = { name: 'xterm', cols: 80, rows: 24, cwd: process.cwd(), env: process.env as Record<string, string> }

type Run = { got: number; ms: number }

function runRaw(size: number, reference: boolean): Promise<Run> {
  return new Promise((resolve) => {
    const t0 = now()
    const pty = rawSpawn('/bin/sh', ['-c', script(size)], opts)
    const ptsName = (pty as unknown as { ptsName: string }).ptsName
    const slave = reference ? openSync(ptsName, constants.O_RDWR | constants.O_NOCTTY) : null
    let got = 0
    let lastData = now()
    let closed = false
    const childDone = (): boolean => {
      try {
        const stat = readFileSync(`/proc/${pty.pid}/stat`, 'utf8')
        return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
      } catch {
        return true
      }
    }
    const poll = reference
      ? setInterval(() => {
          if (!closed && now() - lastData > 10 && childDone()) {
            closed = true
            clearInterval(poll)
            closeSync(slave!)
          }
        }, 5)
      : undefined
    pty.onData((data) => {
      got += data.length
      lastData = now()
    })
    pty.onExit(() => {
      if (poll !== undefined) clearInterval(poll)
      if (slave !== null && !closed) closeSync(slave)
      resolve({ got, ms: now() - t0 })
    })
  })
}

function runProvider(provider: NodePtyProvider, size: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const t0 = now()
    let got = 0
    let id: string | undefined
    const early: Array<{ id: string; data?: string; exit?: true }> = []
    const finish = (): void => {
      offData()
      offExit()
      resolve({ got, ms: now() - t0 })
    }
    const offData = provider.onData((event) => {
      if (id === undefined) early.push({ id: event.id, data: event.data })
      else if (event.id === id) got += event.data.length
    })
    const offExit = provider.onExit((event) => {
      if (id === undefined) early.push({ id: event.id, exit: true })
      else if (event.id === id) finish()
    })
    provider.spawn({ file: '/bin/sh', args: ['-c', script(size)] }).then((result) => {
      id = result.id
      for (const e of early.filter((x) => x.id === id)) {
        if (e.data !== undefined) got += e.data.length
        if (e.exit === true) finish()
      }
    }, reject)
  })
}

function summarize(variant: string, size: number, runs: Run[]): void {
  const short = runs.filter((r) => r.got !== size)
  const ms = runs.map((r) => r.ms).sort((a, b) => a - b)
  const q = (p: number): string => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))]!.toFixed(1)
  const worst = Math.max(0, ...short.map((r) => size - r.got))
  console.log(
    `${String(size).padStart(8)}  ${variant.padEnd(19)} short ${String(short.length).padStart(3)}/${runs.length}` +
      `  worst missing ${String(worst).padStart(5)}  spawn->exit median ${q(0.5)} p90 ${q(0.9)} max ${ms.at(-1)!.toFixed(1)} ms`,
  )
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, RUNS=${RUNS}`)
  const drained = createNodePtyProvider()
  const undrained = createNodePtyProvider({ drainOutputAtExit: false })
  // Warm-up: load node-pty and JIT the paths.
  for (let i = 0; i < 10; i += 1) await runProvider(drained, 1000)
  for (const size of SIZES) {
    const results: Record<string, Run[]> = { raw: [], 'provider-undrained': [], provider: [], reference: [] }
    // Interleaved, so machine noise hits every variant alike.
    for (let i = 0; i < RUNS; i += 1) {
      results['raw']!.push(await runRaw(size, false))
      results['provider-undrained']!.push(await runProvider(undrained, size))
      results['provider']!.push(await runProvider(drained, size))
      results['reference']!.push(await runRaw(size, true))
    }
    for (const [variant, runs] of Object.entries(results)) summarize(variant, size, runs)
  }
  await drained.dispose()
  await undrained.dispose()
}

void main()
