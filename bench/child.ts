/**
 * Runs one measurement in a fresh Node process. Figures that read the parent's memory (idle
 * PTYs, flood) or need a big heap (spawn blocking) must not share a heap with the rest of the
 * benchmark, or one figure's garbage would become another's growth.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build, type Plugin } from 'esbuild'

/** Longest a child measurement may take before it is killed: a hung child must not hang the run. */
export const CHILD_TIMEOUT_MS = 180_000

/** The repository root (children run there so `tsx` and the tsconfig path aliases resolve). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The loader flags that make a child run TypeScript: the ones this process runs under, or `tsx`'s. */
function typeScriptLoaderArgs(): string[] {
  const own = process.execArgv.filter((a, i, all) => a.includes('tsx') || (i + 1 < all.length && (all[i + 1] ?? '').includes('tsx')))
  return own.length > 0 ? own : ['--import', 'tsx']
}

/**
 * How the children run: `tsx` (the default, and always in a full run: the recorded figures were
 * measured so), or `bundle` — an esbuild bundle of the child's script under plain `node`, which
 * `npm run bench -- --quick` uses (see {@link runChildrenAsBundles}).
 */
let childRunner: 'tsx' | 'bundle' = 'tsx'

/**
 * From now on, run every child as an esbuild bundle of its script under plain `node` (the quick
 * run, which judges nothing: `bench/run.ts` calls this for `--quick` only). A tsx start transforms
 * the bench's sources again in each child (0.5–1 s a start, a quick run starts thirteen); the
 * bundle is built once per script per run. Not for a full run: without tsx a child's V8 heap has no
 * slack, and the idle-memory and scale RSS rows measure differently (tried as the default on 6 Dec
 * and reverted: docs/performance.md, "a bench method change tried and reverted").
 */
export function runChildrenAsBundles(): void {
  childRunner = 'bundle'
}

/** Where the children's bundles are written: inside node_modules, so their packages resolve from there. */
const CHILD_BUNDLE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'ptykit-bench-bundles')

/**
 * `ptykit` and `ptykit/<subpath>` stay imports of the file this process resolves them to (the
 * published build), and every bundled source keeps its own `import.meta.url` (a module of the
 * bench finds files next to itself).
 */
const childBundlePlugin: Plugin = {
  name: 'ptykit-bench-child',
  setup(build) {
    build.onResolve({ filter: /^ptykit(\/.*)?$/ }, (args) => ({ path: fileURLToPath(import.meta.resolve(args.path)), external: true }))
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
      loader: 'ts',
    }))
  },
}

const childBundles = new Map<string, Promise<string>>()

/** The bundle of `script` (relative to the repository root), built on first use in this run. */
function childBundle(script: string): Promise<string> {
  let bundle = childBundles.get(script)
  if (bundle === undefined) childBundles.set(script, (bundle = bundleChild(script)))
  return bundle
}

async function bundleChild(script: string): Promise<string> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, script)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    plugins: [childBundlePlugin],
    write: false,
    logLevel: 'silent',
  })
  const [output] = result.outputFiles
  if (output === undefined) throw new Error(`esbuild produced no bundle for ${script}`)
  mkdirSync(CHILD_BUNDLE_DIR, { recursive: true })
  // Named by its content: runs of the same sources share it; a changed source gets a new file.
  const hash = createHash('sha256').update(output.contents).digest('hex').slice(0, 16)
  const bundle = join(CHILD_BUNDLE_DIR, `${basename(script, '.ts')}-${hash}.mjs`)
  // Written aside, then renamed: a concurrent run never starts a half-written bundle.
  writeFileSync(`${bundle}.${process.pid}.partial`, output.contents)
  renameSync(`${bundle}.${process.pid}.partial`, bundle)
  return bundle
}

/** Options of {@link runChild}. */
export type RunChildOptions = {
  /** Extra Node flags (`--expose-gc`, `--max-old-space-size=…`). */
  nodeFlags?: readonly string[]
  /** Longest the child may run before it is killed. Default {@link CHILD_TIMEOUT_MS}. */
  timeoutMs?: number
}

/**
 * Runs `script` (a path relative to the repository root) with `args` in a fresh Node process and
 * resolves with the JSON value the child printed as its last stdout line.
 *
 * Rejects when the child fails, times out or prints no JSON; the error carries its stderr.
 */
export async function runChild<T>(script: string, args: readonly string[], options: RunChildOptions = {}): Promise<T> {
  // Through tsx (its loader flags first), or the script's bundle under plain node (a quick run).
  const nodeArgs =
    childRunner === 'bundle' ? [...(options.nodeFlags ?? []), await childBundle(script)] : [...typeScriptLoaderArgs(), ...(options.nodeFlags ?? []), script]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? CHILD_TIMEOUT_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const last = stdout.trim().split('\n').pop() ?? ''
      if (code !== 0) {
        reject(new Error(`${script} ${args.join(' ')} failed (code ${String(code)}, signal ${String(signal)}): ${stderr.trim()}`))
        return
      }
      try {
        resolve(JSON.parse(last) as T)
      } catch {
        reject(new Error(`${script} ${args.join(' ')} printed no JSON result: ${JSON.stringify(stdout.slice(-500))} ${stderr.trim()}`))
      }
    })
  })
}
