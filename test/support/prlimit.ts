// Tests that run out of descriptors set a process's limits with prlimit(1) (util-linux). Where it
// is missing they fail saying how to install it; they never skip.
import { execFileSync } from 'node:child_process'

/** Throw, with how to install it, unless `prlimit` can set this process's limits. */
export function requirePrlimit(): void {
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), '--nofile'], { stdio: 'ignore' })
  } catch (error) {
    throw new Error(
      `This test needs prlimit(1) on Linux to set a process's descriptor limit (${error instanceof Error ? error.message : String(error)}). ` +
        'Install it with `apt-get update && apt-get install -y util-linux` (Debian/Ubuntu), then run the tests again.',
    )
  }
}
