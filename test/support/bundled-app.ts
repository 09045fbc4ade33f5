// Build a consumer's one-file bundle of an entry (as an IDE extension or an Electron app does:
// esbuild `--bundle --platform=node --format=cjs`), with `ptykit/*` resolved to the sources, and
// place it in a fresh directory outside the repository — an app directory whose package.json is
// the app's, not ptykit's, and whose node_modules holds only what the test ships.
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { buildSync } from 'esbuild'
import { afterEach } from 'vitest'

export const REPO_ROOT = resolve(import.meta.dirname, '../..')

/** A fresh app directory (`package.json` named `my-ide-extension`), removed by the returned function. */
export function makeAppDir(): { dir: string; remove: () => void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-bundled-app-')))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-ide-extension', version: '0.0.1', main: 'out/extension.js' }))
  mkdirSync(join(dir, 'out'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Fresh app directories for the calling file's tests (see {@link makeAppDir}), each removed after its test. */
export function useAppDirs(): () => string {
  const removals: Array<() => void> = []
  afterEach(() => {
    for (const remove of removals.splice(0)) remove()
  })
  return () => {
    const made = makeAppDir()
    removals.push(made.remove)
    return made.dir
  }
}

/** Bundle the source text `code` into `<appDir>/out/<name>`; `external` lists the packages left out. */
export function bundleApp(appDir: string, code: string, options: { external: string[]; name?: string; format?: 'cjs' | 'esm' }): string {
  const entry = join(appDir, 'entry.ts')
  writeFileSync(entry, code)
  const outfile = join(appDir, 'out', options.name ?? 'extension.js')
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: options.format ?? 'cjs',
    target: 'node20',
    external: options.external,
    tsconfig: join(REPO_ROOT, 'tsconfig.json'),
    // The entry lives outside the repository: resolve packages (esbuild, node-pty) from it too.
    nodePaths: [join(REPO_ROOT, 'node_modules')],
    outfile,
    logLevel: 'silent',
  })
  rmSync(entry)
  return outfile
}

/** Run `node <file>` from `cwd`; answers the last line of its stdout parsed as JSON. */
export function runApp(file: string, cwd: string, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, [file], { cwd, timeout: timeoutMs, env: { ...process.env, NODE_PATH: '' } }, (error, stdout, stderr) => {
      const line = stdout.trim().split('\n').at(-1) ?? ''
      try {
        resolvePromise(JSON.parse(line) as Record<string, unknown>)
      } catch {
        reject(new Error(`the app printed no JSON (${String(error)}): ${stdout}\n${stderr}`))
      }
    })
  })
}
