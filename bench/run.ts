/**
 * `npm run bench [-- --quick] [--json] …`: ptykit against raw node-pty, every figure a ratio
 * against raw node-pty measured in the same run, the two sides alternating.
 *
 * Runs the built package (`dist/`, built first when missing or older than the sources): see
 * `built-package.ts` and `tsconfig.dist.json`.
 *
 * Prints the table (stdout; stderr with `--json`, which prints the results as JSON on stdout),
 * progress on stderr, and writes `bench/results.json` in a full run. Exits 1 when a figure failed
 * to run, or with `--strict` when a judged target was missed.
 */
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { REPO_ROOT, runChildrenAsBundles } from './child.js'
import { assertBenchResolvesToDist, buildIfStale } from './built-package.js'
import { parseCli } from './config.js'
import type { FigureResult } from './figure.js'
import type { Log } from './figure-groups.js'
import { readMachineInfo } from './machine.js'
import { renderTable, type BenchResults } from './report.js'

async function main(): Promise<number> {
  const cli = parseCli(process.argv.slice(2))
  const log: Log = (line) => process.stderr.write(`${line}\n`)
  // The published build is what is measured: `ptykit/*` must resolve to dist/, built from these sources.
  assertBenchResolvesToDist()
  buildIfStale(log)
  // The quick run judges nothing: its children start as bundles under plain node, not through tsx
  // (a full run's children always run through tsx, as every recorded run measured them).
  if (cli.config.mode === 'quick') runChildrenAsBundles()
  const { FIGURE_GROUPS } = await import('./figure-groups.js')
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
