import { afterAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const repoRoot = fileURLToPath(new URL('..', import.meta.url))
const script = path.join(repoRoot, 'scripts', 'check-layering.mjs')

const fixtureRoots: string[] = []

/** Writes a throwaway tree `{ 'src/x/y.ts': '…' }` and returns its root. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'ptykit-layering-'))
  fixtureRoots.push(root)
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(root, relative)
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  return root
}

function runChecker(...args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 15_000 })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

afterAll(() => {
  for (const root of fixtureRoots) rmSync(root, { recursive: true, force: true })
})

describe('scripts/check-layering.mjs', () => {
  it('passes on this repository', () => {
    const { status, output } = runChecker()
    expect(output).toMatch(/^check-layering: OK/m)
    expect(status).toBe(0)
  })

  it('states the whole rule, every module included, and points to docs/architecture.md, which documents every module', () => {
    const { output } = runChecker()
    const rule = 'exit-cause < contracts < spawn < controller < {node-pty, testing, ssh} < pty-host'
    expect(output).toContain(`obey ${rule} (see docs/architecture.md#the-layering-rule)`)
    const architecture = readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8')
    expect(architecture).toContain('### The layering rule')
    for (const module of ['exit-cause', 'contracts', 'spawn', 'controller', 'node-pty', 'testing', 'ssh', 'pty-host']) {
      expect(output).toContain(module)
      expect(architecture, module).toContain(`| \`${module}\` |`)
    }
  })

  it('can fail: names each violation with file:line, the specifier and the rule', () => {
    const root = fixture({
      'src/exit-cause/x.ts': "import { readFileSync } from 'node:fs'\nexport const x = readFileSync\n",
      'src/exit-cause/ok.ts': "import { x } from './x.js'\nexport const ok = x\n",
      'src/contracts/y.ts': "export const a = 1\nimport { c } from '../controller/index.js'\nexport const y = c\n",
      // Type-only imports count too.
      'src/contracts/types.ts': "import type { IPty } from 'node-pty'\nexport type T = IPty\n",
      'src/spawn/z.ts': [
        "// import 'vitest' — a comment is not an import",
        "const text = \"import fc from 'fast-check'\" // nor is a string",
        "export const load = () => import('fs')",
        'export { text }',
        '',
      ].join('\n'),
      'src/controller/c.ts': [
        "import { EventEmitter } from 'node:events'",
        "import type TypedEmitter from 'typed-emitter'",
        "import { spawn } from 'node:child_process'",
        "import '../testing/index.js'",
        'export { EventEmitter, spawn }',
        'export type E = TypedEmitter<Record<string, () => void>>',
        '',
      ].join('\n'),
      'src/testing/t.ts': [
        "import fc from 'fast-check'",
        "import { describe } from 'vitest'",
        "import { spawn } from 'node-pty'",
        "const cp = require('node:child_process')",
        "import { c } from '../controller/index.js'",
        'export { fc, describe, spawn, cp, c }',
        '',
      ].join('\n'),
      'src/node-pty/n.ts': [
        "import * as pty from 'node-pty'",
        "import { readFile } from 'node:fs/promises'",
        "import { c } from '../controller/index.js'",
        "export { fakeProvider } from '../testing/index.js'",
        'export { pty, readFile, c }',
        '',
      ].join('\n'),
      'src/index.ts': "export * from './exit-cause/index.js'\nexport * from './node-pty/index.js'\n",
    })
    const { status, output } = runChecker('--root', root)
    expect(status).toBe(1)

    const expected: [where: string, spec: string][] = [
      ['src/exit-cause/x.ts:1', 'node:fs'],
      ['src/contracts/y.ts:2', '../controller/index.js'],
      ['src/contracts/types.ts:1', 'node-pty'],
      ['src/spawn/z.ts:3', 'fs'],
      ['src/controller/c.ts:3', 'node:child_process'],
      ['src/controller/c.ts:4', '../testing/index.js'],
      ['src/testing/t.ts:3', 'node-pty'],
      ['src/testing/t.ts:4', 'node:child_process'],
      ['src/node-pty/n.ts:4', '../testing/index.js'],
      ['src/index.ts:2', './node-pty/index.js'],
    ]
    for (const [where, spec] of expected) {
      expect(output, `${where} '${spec}'`).toContain(`${where}  '${spec}'`)
    }
    expect(output).toContain(`check-layering: ${expected.length} violation(s)`)
    expect(output).toMatch(/src\/exit-cause\/x\.ts:1 .*exit-cause imports nothing outside src\/exit-cause/)
    expect(output).toMatch(/src\/contracts\/y\.ts:2 .*contracts may not import controller \(a higher module\)/)

    // Allowed imports, comments and strings are not reported.
    for (const clean of ['src/exit-cause/ok.ts:1', 'src/controller/c.ts:1', 'src/controller/c.ts:2', 'src/testing/t.ts:1', 'src/testing/t.ts:2', 'src/testing/t.ts:5', 'src/spawn/z.ts:1', 'src/spawn/z.ts:2', 'src/node-pty/n.ts:1', 'src/node-pty/n.ts:2', 'src/node-pty/n.ts:3', 'src/index.ts:1']) {
      expect(output).not.toContain(`${clean} `)
    }
  })

  it('passes a tree that uses exactly the allowed edges', () => {
    const root = fixture({
      'src/exit-cause/index.ts': "export * from './a.js'\n",
      'src/exit-cause/a.ts': 'export const a = 1\n',
      'src/contracts/index.ts': "import type { a } from '../exit-cause/index.js'\nexport type A = typeof a\n",
      'src/spawn/index.ts': "export * from '../exit-cause/index.js'\nexport * from '../contracts/index.js'\n",
      'src/controller/index.ts': [
        "import { EventEmitter } from 'node:events'",
        "import type TypedEmitter from 'typed-emitter'",
        "export * from '../spawn/index.js'",
        'export { EventEmitter }',
        'export type E = TypedEmitter<Record<string, () => void>>',
        '',
      ].join('\n'),
      'src/node-pty/index.ts': [
        "import * as pty from 'node-pty'",
        "import os from 'node:os'",
        "export * from '../controller/index.js'",
        'export { pty, os }',
        '',
      ].join('\n'),
      'src/testing/index.ts': [
        "import fc from 'fast-check'",
        "import { it } from 'vitest'",
        "import { setTimeout } from 'node:timers'",
        "export * from '../controller/index.js'",
        'export { fc, it, setTimeout }',
        '',
      ].join('\n'),
      'src/index.ts': [
        "export * from './exit-cause/index.js'",
        "export * from './contracts/index.js'",
        "export * from './spawn/index.js'",
        "export * from './controller/index.js'",
        '',
      ].join('\n'),
    })
    const { status, output } = runChecker('--root', root)
    expect(output).toMatch(/^check-layering: OK — 8 file\(s\)/m)
    expect(status).toBe(0)
  })
})
