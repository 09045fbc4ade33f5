import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  contextNames,
  contextReexports,
  excerptMismatch,
  extractSamples,
  runtimeImports,
  runtimeImportsProbe,
  sampleModule,
} from '../../scripts/consumer-types/doc-samples.mjs'

const markdown = [
  '# Title', //                                  1
  '```ts', //                                    2
  "import { a } from 'x'", //                    3
  'const b = await a(controller)', //            4
  '```', //                                      5
  '```sh', //                                    6
  'npm test', //                                 7
  '```', //                                      8
  '<!-- not-compiled -->', //                    9
  '', //                                        10
  '```ts', //                                   11
  'half a sample(', //                          12
  '```', //                                     13
  '```typescript', //                           14
  '// @noCompile', //                           15
  '```', //                                     16
  '```typescript', //                           17
  "import type {", //                           18
  '  T,', //                                    19
  "} from 'y'", //                              20
  'let t: T', //                                21
  '```', //                                     22
].join('\n')

describe('doc samples for the consumer type check', () => {
  it('takes only ts/typescript fences, and honours both opt-out markers', () => {
    const { samples, skipped } = extractSamples(markdown, 'DOC.md')
    expect(samples.map((s) => [s.line, s.code])).toEqual([
      [3, "import { a } from 'x'\nconst b = await a(controller)"],
      [18, "import type {\n  T,\n} from 'y'\nlet t: T"],
    ])
    expect(skipped).toEqual(['DOC.md:11', 'DOC.md:14'])
  })

  it('keeps imports on top, wraps the rest in an async function and maps lines back', () => {
    const [first, second] = extractSamples(markdown, 'DOC.md').samples
    const module = sampleModule(first!, ['controller', 'a', 'id'])
    const lines = module.text.trimEnd().split('\n')
    expect(lines).toEqual([
      '// DOC.md:3',
      "import { a } from 'x'",
      "import { controller, id } from './doc-context.js'", // `a` is the sample's own import
      'export async function sample(): Promise<void> {',
      'const b = await a(controller)',
      '}',
    ])
    expect(module.origin).toEqual([null, 3, null, null, 4, null])
    expect(module.specifiers).toEqual(['x'])
    const multiLine = sampleModule(second!, [])
    expect(multiLine.text.split('\n').slice(1, 4)).toEqual(['import type {', '  T,', "} from 'y'"])
    expect(multiLine.origin.slice(1, 4)).toEqual([18, 19, 20])
  })

  it('offers every export of doc-context.ts as context', () => {
    const names = contextNames(path.resolve(__dirname, '../../scripts/consumer-types/doc-context.ts'))
    expect(names).toEqual(expect.arrayContaining(['controller', 'provider', 'id', 'relay', 'terminalView']))
  })

  it("a guide's own context wins over the shared one; its library names go only to a fence without imports", () => {
    const guide = { module: './doc-context.guide.js', names: ['provider', 'expect', 'createThing'], reexports: ['createThing'] }
    const continuation = sampleModule({ doc: 'G.md', line: 1, code: 'provider.go(createThing())' }, ['controller', 'provider'], guide)
    expect(continuation.text.split('\n').slice(1, 3)).toEqual([
      "import { provider, expect, createThing } from './doc-context.guide.js'",
      "import { controller } from './doc-context.js'", // `provider` is the guide's
    ])
    expect(continuation.contextModules).toEqual(['./doc-context.guide.js'])
    const wholeFile = sampleModule({ doc: 'G.md', line: 1, code: "import { x } from 'y'\ncreateThing(x)" }, ['controller'], guide)
    expect(wholeFile.text).toContain("import { provider, expect } from './doc-context.guide.js'") // createThing must be imported
    const testingContext = path.resolve(__dirname, '../../scripts/consumer-types/doc-context.testing-with-the-fake-provider.ts')
    expect(contextNames(testingContext)).toEqual(expect.arrayContaining(['provider', 'expect', 'setup', 'createPtyController']))
    expect(contextReexports(testingContext)).toEqual(expect.arrayContaining(['createPtyController', 'createManualClock']))
    expect(contextReexports(testingContext)).not.toContain('expect')
  })

  it('checks an excerpt against the file it quotes: lines in order, lines left out and comments not compared', () => {
    const doc = [
      'Text', //                                                 1
      '<!-- excerpt: src/thing.ts -->', //                       2
      '```ts', //                                                3
      'function f(): void {', //                                 4
      '  a() // a comment of the guide', //                      5
      '  // another comment', //                                 6
      '  c()', //                                                7
      '}', //                                                    8
      '```', //                                                  9
    ].join('\n')
    const { samples, excerpts, skipped } = extractSamples(doc, 'DOC.md')
    expect(samples).toEqual([])
    expect(skipped).toEqual([])
    expect(excerpts).toEqual([{ doc: 'DOC.md', line: 4, source: 'src/thing.ts', code: expect.stringContaining('function f') }])
    const [excerpt] = excerpts
    const source = ['// header', 'function f(): void {', '  a()', '  b() // left out', '  c() // the source says more', '}'].join('\n')
    expect(excerptMismatch(excerpt!, source)).toBeNull()
    expect(excerptMismatch(excerpt!, source.replace('c()', 'renamed()'))).toEqual({ line: 7, text: 'c()' })
    // In order: a line found only before the previous one is a mismatch.
    expect(excerptMismatch(excerpt!, ['function f(): void {', '  c()', '  a()', '}'].join('\n'))).toEqual({ line: 7, text: 'c()' })
  })

  it("lists the bindings a fence takes from packages at run time: no type-only ones, no relative or node: ones", () => {
    const code = [
      "import headless from '@xterm/headless'", //                         10
      "import { a, type T, b as c } from 'x'", //                           11
      "import type { U } from 'y'", //                                      12
      "import { type V } from 'z'", //                                      13
      "import * as ns from 'w'", //                                         14
      "import { mine } from './custom-provider.js'", //                     15
      "import { strict as assert } from 'node:assert'", //                  16
      "import 'side-effect'", //                                            17
    ].join('\n')
    expect(runtimeImports({ doc: 'DOC.md', line: 10, code })).toEqual([
      { line: 10, specifier: '@xterm/headless', names: [], default: true, namespace: false },
      { line: 11, specifier: 'x', names: ['a', 'b'], default: false, namespace: false },
      { line: 14, specifier: 'w', names: [], default: false, namespace: true },
    ])
  })

  it('the run-time probe names each import an ES module cannot take, and nothing when all load', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptykit-doc-imports-'))
    try {
      // A CommonJS package whose exports Node's lexer cannot see (as @xterm/headless's bundle), and an ES one.
      const pkg = (name: string, main: string, text: string) => {
        fs.mkdirSync(path.join(dir, 'node_modules', name), { recursive: true })
        fs.writeFileSync(path.join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, main }))
        fs.writeFileSync(path.join(dir, 'node_modules', name, main), text)
      }
      pkg('opaque-cjs', 'index.js', 'module.exports = (() => ({ Terminal: class Terminal {} }))()\n')
      pkg('plain-esm', 'index.mjs', 'export class Terminal {}\n')
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
      const probe = (code: string) => {
        fs.writeFileSync(path.join(dir, 'probe.mjs'), runtimeImportsProbe(runtimeImports({ doc: 'DOC.md', line: 3, code }).map((i) => ({ doc: 'DOC.md', ...i }))))
        return execFileSync(process.execPath, ['probe.mjs'], { cwd: dir, encoding: 'utf8' }).trim()
      }
      expect(probe("import { Terminal } from 'opaque-cjs'")).toMatch(/^DOC\.md:3: 'opaque-cjs' has no export named 'Terminal' at run time/)
      expect(probe("import opaque from 'opaque-cjs'\nimport { Terminal } from 'plain-esm'")).toBe('')
      expect(probe("import plain from 'plain-esm'")).toMatch(/^DOC\.md:3: 'plain-esm' has no export named 'default'/)
      expect(probe("import { x } from 'not-installed'")).toMatch(/^DOC\.md:3: 'not-installed' cannot be imported: /)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
