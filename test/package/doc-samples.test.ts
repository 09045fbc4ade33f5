import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { contextNames, extractSamples, sampleModule } from '../../scripts/consumer-types/doc-samples.mjs'

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
})
