import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

const script = path.resolve(__dirname, '../../scripts/check-exports-documented.mjs')
const fixtures: string[] = []

function fixture(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ptykit-tsdoc-'))
  fixtures.push(root)
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  return root
}

afterEach(() => {
  for (const root of fixtures.splice(0)) fs.rmSync(root, { recursive: true, force: true })
})

// Each case runs the script in a child Node process that loads the TypeScript compiler: seconds of
// CPU, and far more wall time on a loaded machine. The timeout guards against a hang, not speed.
const SCRIPT_RUN_TIMEOUT_MS = 120_000

describe('check-exports-documented', { timeout: SCRIPT_RUN_TIMEOUT_MS }, () => {
  // Whether the repository itself passes is `npm run check:docs` (part of `npm test`), which runs
  // this script on it: a test doing the same would compile every source a second time.

  it('names each undocumented export, including re-exports', () => {
    const root = fixture({
      'src/exit-cause/index.ts':
        "/** Documented. */\nexport const good = 1\nexport const bad = 2\nexport { hidden } from './inner.js'\n",
      'src/exit-cause/inner.ts': 'export function hidden(): number { return 3 }\n',
    })
    const run = spawnSync(process.execPath, [script, '--root', root], { encoding: 'utf8' })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('`bad`')
    expect(run.stderr).toContain('`hidden`')
    expect(run.stderr).not.toContain('`good`')
  })
})
