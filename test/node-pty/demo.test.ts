import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

describe('examples/demo.ts (`npm run demo`)', () => {
  it('runs the four endings, prints the expected causes next to raw node-pty, and exits 0', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, NO_COLOR: '1' },
    })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    const table = run.stdout
    expect(table).toMatch(/clean\s+exited\(0\)\s+Agent process exited with code 0\s+\{ exitCode: 0, signal: 0 \}/)
    expect(table).toMatch(/exit-3\s+exited\(3\)\s+Agent process exited with code 3\s+\{ exitCode: 3, signal: 0 \}/)
    expect(table).toMatch(/kill-9\s+signaled\(9\)\s+Agent process killed by signal 9\s+\{ exitCode: 0, signal: 9 \}/)
    expect(table).toMatch(/stopped\s+operator_close\s+Terminal closed by operator request/)
    expect(table).toContain('[exit-3]   something failed')
    // No colour codes without a TTY (and with NO_COLOR).
    expect(table).not.toContain('\u001b[')
    // Fits a 100-column terminal.
    for (const line of table.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(100)
  })
})
