// Child processes that tests start from TypeScript sources (a pty host, a provider's host child, a
// throwaway app) run as one bundled ESM file under plain `node`, not through `node --import tsx`.
//
// Why: tsx loads itself and transforms every imported source in each child it starts: about a
// second of CPU per start, and the suite starts dozens of hosts. One esbuild bundle per test file
// costs a fraction of one such start; the child then starts as fast as the built package would.
//
// What the bundle holds: the entry and every source it imports (`ptykit/*` resolved to `src/`
// through tsconfig.json's paths, as tsx and vitest do). Packages stay external (node-pty, the
// optional peers), so they load from the repository's node_modules exactly as from the sources.
// That is why the bundle is written under `node_modules/.cache/`: Node resolves those packages
// from there. The file name carries a hash of the bundle, so an unchanged entry is written once,
// concurrent test files agree on it, and a changed source gets a new file (never a stale one).
// Each use marks its bundle as used; bundles of the same entry unused for an hour are removed.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { basename, extname, join, resolve } from 'node:path'
import { buildSync } from 'esbuild'

const REPO_ROOT = resolve(import.meta.dirname, '../..')

/** How long a bundle nobody used is kept (an older version of the sources, most likely). */
const UNUSED_BUNDLE_LIFETIME_MS = 60 * 60 * 1000

/** Where bundles are written: inside the repository's node_modules, so their packages resolve. */
export const NODE_ENTRY_BUNDLE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'ptykit-test-bundles')

/**
 * Bundle the TypeScript `entry` (an absolute path) for plain `node`; answers the bundle's path.
 * Inline source maps, so a child's stack traces (with `--enable-source-maps`) name the sources.
 */
export function bundleNodeEntry(entry: string): string {
  const result = buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    tsconfig: join(REPO_ROOT, 'tsconfig.json'),
    sourcemap: 'inline',
    write: false,
    logLevel: 'silent',
  })
  const [output] = result.outputFiles
  if (output === undefined) throw new Error(`esbuild produced no bundle for ${entry}`)
  const hash = createHash('sha256').update(output.contents).digest('hex').slice(0, 16)
  const name = basename(entry, extname(entry))
  const bundle = join(NODE_ENTRY_BUNDLE_DIR, `${name}-${hash}.mjs`)
  if (!existsSync(bundle)) {
    mkdirSync(NODE_ENTRY_BUNDLE_DIR, { recursive: true })
    // Written aside, then renamed: a concurrent test file never runs a half-written bundle.
    const partial = `${bundle}.${process.pid}.partial`
    writeFileSync(partial, output.contents)
    renameSync(partial, bundle)
  }
  const now = new Date()
  utimesSync(bundle, now, now)
  removeUnusedBundles(name, now.getTime())
  return bundle
}

/** What follows `<entry name>-` in a bundle's file name (or in one being written). */
const BUNDLE_SUFFIX = /^[0-9a-f]{16}\.mjs(\.\d+\.partial)?$/

/** Remove the bundles of entry `name` not used for {@link UNUSED_BUNDLE_LIFETIME_MS}. */
function removeUnusedBundles(name: string, now: number): void {
  const prefix = `${name}-`
  for (const file of readdirSync(NODE_ENTRY_BUNDLE_DIR)) {
    if (!file.startsWith(prefix) || !BUNDLE_SUFFIX.test(file.slice(prefix.length))) continue
    const path = join(NODE_ENTRY_BUNDLE_DIR, file)
    try {
      if (now - statSync(path).mtimeMs > UNUSED_BUNDLE_LIFETIME_MS) rmSync(path, { force: true })
    } catch {
      // Removed meanwhile by a concurrent test file.
    }
  }
}

/** The `node` arguments that run the bundle of `entry` (see {@link bundleNodeEntry}). */
export function nodeArgsFor(entry: string): string[] {
  return ['--enable-source-maps', bundleNodeEntry(entry)]
}
