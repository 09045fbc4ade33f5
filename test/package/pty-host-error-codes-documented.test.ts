/**
 * The pty host guide's error-code table (docs/pty-host.md, "Error codes") names every code of
 * `PtyHostErrorCode`, and only those. Before, the guide had no such list: the codes were met one by
 * one in its prose, and `pty_live_other_incarnation` and `provider_disposed` were never mentioned.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')

/** The codes of the `PtyHostErrorCode` union, read from its source. */
function codesOfTheUnion(): string[] {
  const source = fs.readFileSync(path.join(root, 'src/pty-host/pty-host-error.ts'), 'utf8')
  const union = /export type PtyHostErrorCode =([^]*?)\n\n/.exec(source)?.[1] ?? ''
  return [...union.matchAll(/\|\s*'([a-z_]+)'/g)].map((match) => match[1]!)
}

/** The codes in the first column of the guide's "Error codes" table. */
function codesOfTheTable(): string[] {
  const guide = fs.readFileSync(path.join(root, 'docs/pty-host.md'), 'utf8')
  const section = /\n## Error codes\n([^]*?)\n## /.exec(guide)?.[1] ?? ''
  return [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]!)
}

describe('docs/pty-host.md error codes', () => {
  it('reads the union it checks against (so the check cannot pass vacuously)', () => {
    expect(codesOfTheUnion()).toContain('host_unavailable')
    expect(codesOfTheUnion().length).toBeGreaterThanOrEqual(17)
  })

  it('the table lists every PtyHostErrorCode once, and no other code', () => {
    const table = codesOfTheTable()
    expect(new Set(table).size).toBe(table.length)
    expect([...table].sort()).toEqual([...codesOfTheUnion()].sort())
  })
})
