import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const script = path.resolve(import.meta.dirname, '../../scripts/run-concurrently.mjs')

function run(...commands: string[]): { status: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [script, ...commands], { encoding: 'utf8' })
  return { status: result.status, stdout: result.stdout }
}

describe('scripts/run-concurrently.mjs (npm test runs its steps through it)', () => {
  it('exits 0 when every command succeeds, and prints the held outputs whole, in the given order', () => {
    // The second command finishes last, yet its block comes before the third's.
    const { status, stdout } = run('echo first', 'sleep 0.3; echo second-a; echo second-b', 'echo third >&2')
    expect(status).toBe(0)
    expect(stdout).toMatch(/first\n[^]*── sleep 0\.3; echo second-a; echo second-b ──\nsecond-a\nsecond-b\n[^]*── echo third >&2 ──\nthird\n/)
    expect(stdout.match(/: ok \(/g)).toHaveLength(3)
  })

  it('fails with the first failing status, after every command has run to its end', () => {
    const { status, stdout } = run('exit 0', 'exit 3', 'sleep 0.3; echo still-ran; exit 5')
    expect(status).toBe(3)
    expect(stdout).toContain('exit 3: failed with status 3')
    expect(stdout).toContain('still-ran')
    expect(stdout).toContain('failed with status 5')
  })

  it('refuses to run without a command', () => {
    expect(run().status).toBe(2)
  })
})
