// vitest's global setup: one scratch directory for the whole test run, given to every test worker
// and every process they start as `TMPDIR` (Node's `os.tmpdir()`, mkdtemp in C, Chromium and sshd
// all read it), removed at the end of the run whatever is left in it.
//
// Why: the tests make scratch directories (`mkdtemp(join(tmpdir(), 'ptykit-…-'))`) for sockets,
// journals, compiled helpers and fake /proc trees. One that a test forgets to remove, or that a
// killed run never reaches, stayed in /tmp for good — hundreds after a day of runs. Now nothing
// outlives the run, and a test that leaves its own scratch behind (a `ptykit-` entry) fails the run
// by name, so the forgetting is found where it is written.
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * vitest runs a global setup once per project (`shared-modules`, `isolated`, `types`), all in its
 * main process: the first creates the directory, the last teardown checks and removes it.
 */
type RunScratch = { dir: string; previousTmpdir: string | undefined; users: number }
const KEY = Symbol.for('ptykit.test.runScratchDir')
const shared = globalThis as { [KEY]?: RunScratch }

/** The entries a run's own tests left behind: their scratch directories are named `ptykit-…`. */
function leftScratch(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith('ptykit-'))
}

export default function setup(): () => void {
  let scratch = shared[KEY]
  if (scratch === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'ptykit-test-run-'))
    // As /tmp is: the SSH tests log in as an unprivileged user, whose sshd and shell use it too.
    chmodSync(dir, 0o1777)
    scratch = { dir, previousTmpdir: process.env['TMPDIR'], users: 0 }
    shared[KEY] = scratch
    // Set before vitest starts its workers, which inherit the environment.
    process.env['TMPDIR'] = dir
  }
  scratch.users += 1
  const run = scratch
  return function teardown() {
    run.users -= 1
    if (run.users > 0) return
    delete shared[KEY]
    if (run.previousTmpdir === undefined) delete process.env['TMPDIR']
    else process.env['TMPDIR'] = run.previousTmpdir
    const left = leftScratch(run.dir)
    rmSync(run.dir, { recursive: true, force: true })
    if (left.length > 0) {
      // vitest reports an error thrown here but still exits 0: the exit code is set as well.
      process.exitCode = 1
      throw new Error(
        `The test run left ${left.length} scratch director${left.length === 1 ? 'y' : 'ies'} of its own behind (removed now): ${left.join(', ')}. ` +
          'The test that makes one (grep the prefix) must remove it when it ends, in an afterAll/afterEach or a finally.',
      )
    }
  }
}
