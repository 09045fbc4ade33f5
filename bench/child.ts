/**
 * Runs one measurement in a fresh Node process. Figures that read the parent's memory (idle
 * PTYs, flood) or need a big heap (spawn blocking) must not share a heap with the rest of the
 * benchmark, or one figure's garbage would become another's growth.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Longest a child measurement may take before it is killed: a hung child must not hang the run. */
export const CHILD_TIMEOUT_MS = 180_000

/** The repository root (children run there so `tsx` and the tsconfig path aliases resolve). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The loader flags that make a child run TypeScript: the ones this process runs under, or `tsx`'s. */
function typeScriptLoaderArgs(): string[] {
  const own = process.execArgv.filter((a, i, all) => a.includes('tsx') || (i + 1 < all.length && (all[i + 1] ?? '').includes('tsx')))
  return own.length > 0 ? own : ['--import', 'tsx']
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
export function runChild<T>(script: string, args: readonly string[], options: RunChildOptions = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...typeScriptLoaderArgs(), ...(options.nodeFlags ?? []), script, ...args], {
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
