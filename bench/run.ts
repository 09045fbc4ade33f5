/**
 * `npm run bench [-- --quick] [--json] …`: ptykit against raw node-pty, every figure a ratio
 * against raw node-pty measured in the same run, the two sides alternating.
 *
 * Prints the table (stdout; stderr with `--json`, which prints the results as JSON on stdout),
 * progress on stderr, and writes `bench/results.json` in a full run. Exits 1 when a figure failed
 * to run, or with `--strict` when a judged target was missed.
 */
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { REPO_ROOT } from './child.js'
import { parseCli, type BenchConfig } from './config.js'
import type { FigureResult } from './figure.js'
import { measureBytePath } from './figures/byte-path.js'
import { measureConcurrentSpawns } from './figures/concurrent-spawns.js'
import { measureDataBatching } from './figures/data-batching.js'
import { measureFlood } from './figures/flood.js'
import { measureIdleMemory } from './figures/idle-memory.js'
import { measureMassStop, measureScale } from './figures/mass-stop.js'
import { measurePipelineCost } from './figures/pipeline-cost.js'
import { measureSpawnBlocking } from './figures/spawn-blocking.js'
import { measureSsh } from './figures/ssh.js'
import { measureSpawnExit } from './figures/spawn-exit.js'
import { measureSpawnFirstByte } from './figures/spawn-first-byte.js'
import { measureNonAckingThroughput, measurePtyHostThroughput, measureThroughput } from './figures/throughput.js'
import { measurePtyHostWriteEcho, measureWriteEcho } from './figures/write-echo.js'
import { readMachineInfo } from './machine.js'
import { renderTable, type BenchResults } from './report.js'

type Log = (line: string) => void
type Group = { id: string; run: (config: BenchConfig, log: Log) => Promise<FigureResult | FigureResult[]> }

/** The figure groups, in table order; `--only` selects by these ids. */
export const FIGURE_GROUPS: readonly Group[] = [
  { id: 'throughput', run: measureThroughput },
  { id: 'throughput-non-acking', run: measureNonAckingThroughput },
  { id: 'spawn-first-byte', run: measureSpawnFirstByte },
  { id: 'spawn-exit', run: measureSpawnExit },
  { id: 'concurrent-spawns', run: measureConcurrentSpawns },
  { id: 'write-echo', run: measureWriteEcho },
  { id: 'byte-path', run: measureBytePath },
  { id: 'data-batching', run: measureDataBatching },
  { id: 'throughput-pty-host', run: measurePtyHostThroughput },
  { id: 'write-echo-pty-host', run: measurePtyHostWriteEcho },
  { id: 'idle-memory', run: measureIdleMemory },
  { id: 'flood', run: measureFlood },
  { id: 'pipeline-cost', run: measurePipelineCost },
  { id: 'spawn-blocking', run: measureSpawnBlocking },
  { id: 'ssh', run: measureSsh },
  { id: 'mass-stop', run: measureMassStop },
  { id: 'scale', run: measureScale },
]

async function main(): Promise<number> {
  const cli = parseCli(process.argv.slice(2))
  const log: Log = (line) => process.stderr.write(`${line}\n`)
  const started = Date.now()
  const figures: FigureResult[] = []
  const errors: { group: string; message: string }[] = []
  const groups = FIGURE_GROUPS.filter((g) => cli.only.length === 0 || cli.only.some((o) => g.id.startsWith(o)))
  for (const group of groups) {
    const t0 = Date.now()
    log(`${group.id}…`)
    try {
      const result = await group.run(cli.config, log)
      figures.push(...(Array.isArray(result) ? result : [result]))
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error)
      errors.push({ group: group.id, message })
      log(`  FAILED: ${message}`)
    }
    log(`  (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
  }
  const results: BenchResults & { errors: typeof errors } = {
    mode: cli.config.mode,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    machine: readMachineInfo(),
    figures,
    errors,
  }
  const table = renderTable(results)
  if (cli.json) {
    process.stderr.write(`\n${table}\n`)
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`)
  } else {
    process.stdout.write(`\n${table}\n`)
  }
  if (cli.out !== null) {
    const path = resolve(REPO_ROOT, cli.out)
    writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`)
    log(`results written to ${path}`)
  }
  if (errors.length > 0) return 1
  if (cli.strict && figures.some((f) => f.verdict === 'miss')) return 1
  return 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(2)
  },
)
