/**
 * The bench measures the published build: `ptykit/*` must resolve to `dist/` (not to the sources
 * through the tsconfig `paths`, where tsx's `keepNames` wrappers inflate heap and CPU), and `dist/`
 * must be built from the current sources. `npm run bench` builds it when it is missing or stale.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { REPO_ROOT } from './child.js'

/** The subpaths the bench imports. */
const BENCH_SUBPATHS = ['controller', 'node-pty', 'pty-host', 'ssh', 'testing'] as const

/** What the build reads besides `src/`. */
const BUILD_INPUTS = ['package.json', 'tsup.config.ts', 'tsconfig.json', 'tsconfig.build.json']

/** The newest modification time among `dir`'s files, recursively, with the file that has it. */
function newestFile(dir: string): { path: string; mtimeMs: number } {
  let newest = { path: dir, mtimeMs: 0 }
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    const candidate = entry.isDirectory() ? newestFile(path) : { path, mtimeMs: statSync(path).mtimeMs }
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate
  }
  return newest
}

/** Why `dist/` cannot be measured as it is (missing or older than a source), or `null` when it is current. */
export function staleBuildReason(): string | null {
  const entries = BENCH_SUBPATHS.map((subpath) => join(REPO_ROOT, 'dist', subpath, 'index.js'))
  const missing = entries.find((entry) => !existsSync(entry))
  if (missing !== undefined) return `${relative(REPO_ROOT, missing)} is missing`
  const builtAt = Math.min(...entries.map((entry) => statSync(entry).mtimeMs))
  const inputs = [newestFile(join(REPO_ROOT, 'src')), ...BUILD_INPUTS.map((name) => ({ path: join(REPO_ROOT, name), mtimeMs: statSync(join(REPO_ROOT, name)).mtimeMs }))]
  const newer = inputs.find((input) => input.mtimeMs > builtAt)
  return newer === undefined ? null : `${relative(REPO_ROOT, newer.path)} is newer than dist/`
}

/** Run `npm run build` when `dist/` is missing or stale; its output goes to stderr (stdout may carry JSON). */
export function buildIfStale(log: (line: string) => void): void {
  const reason = staleBuildReason()
  if (reason === null) return
  log(`building dist/ (${reason})…`)
  const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', process.stderr, process.stderr] })
  if (build.status !== 0) throw new Error(`\`npm run build\` failed (status ${String(build.status)}): the bench measures the built package`)
  const still = staleBuildReason()
  if (still !== null) throw new Error(`dist/ is still not current after \`npm run build\`: ${still}`)
}

/**
 * Throws unless every `ptykit/*` subpath the bench imports resolves into `dist/`: run through
 * `npm run bench`, not `tsx bench/run.ts` (which would measure the sources).
 */
export function assertBenchResolvesToDist(): void {
  const dist = join(REPO_ROOT, 'dist') + sep
  for (const subpath of BENCH_SUBPATHS) {
    const resolved = fileURLToPath(import.meta.resolve(`ptykit/${subpath}`))
    if (!resolved.startsWith(dist)) {
      throw new Error(
        `The bench measures the built package, but ptykit/${subpath} resolves to ${relative(REPO_ROOT, resolved)}. ` +
          'Run it with `npm run bench` (that is `tsx --tsconfig bench/tsconfig.dist.json bench/run.ts`, which resolves `ptykit/*` through package.json `exports` to dist/).',
      )
    }
  }
}
