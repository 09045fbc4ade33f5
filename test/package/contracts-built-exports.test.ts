// The misspelt-spawn-option check a custom provider calls (helper-240) reaches a consumer of the built
// package, from `ptykit/contracts`, in ESM and CommonJS: the contracts entry is built with the
// package's own tsup configuration (both formats, its declarations too) into a package directory
// beside this repository's package.json, and loaded there by a plain `node` through the `exports` map.
// Before, the check was internal: neither `import` nor `require` of `ptykit/contracts` gave it.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { build } from 'tsup'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import tsupConfig from '../../tsup.config.js'

const root = path.resolve(import.meta.dirname, '../..')

// A build of one entry (both formats, with declarations) takes seconds of CPU; more under load.
const BUILD_TIMEOUT_MS = 120_000

let consumer: string

beforeAll(async () => {
  consumer = fs.mkdtempSync(path.join(os.tmpdir(), 'ptykit-contracts-exports-'))
  const pkgDir = path.join(consumer, 'node_modules', 'ptykit')
  fs.mkdirSync(pkgDir, { recursive: true })
  fs.copyFileSync(path.join(root, 'package.json'), path.join(pkgDir, 'package.json'))
  fs.writeFileSync(path.join(consumer, 'package.json'), '{"name":"consumer","private":true}\n')
  const config = Array.isArray(tsupConfig) ? tsupConfig[0] : tsupConfig
  if (typeof config !== 'object' || config === null) throw new Error('tsup.config.ts exports no options object')
  await build({
    ...config,
    config: false,
    entry: { 'contracts/index': path.join(root, 'src/contracts/index.ts') },
    tsconfig: path.join(root, 'tsconfig.build.json'),
    outDir: path.join(pkgDir, 'dist'),
    sourcemap: false,
    silent: true,
  })
}, BUILD_TIMEOUT_MS)

afterAll(() => {
  if (consumer !== undefined) fs.rmSync(consumer, { recursive: true, force: true })
})

/** What a consumer's script prints: the two functions' answers to `{ cdw: '/tmp' }`, and the `evn` refusal. */
const probe = (load: string): string => `
${load}
const found = findMisspeltSpawnOption({ file: 'sh', cdw: '/tmp' })
let refusal
try { assertNoMisspeltSpawnOption({ evn: { TOKEN: 'secret-value' } }) } catch (error) { refusal = error }
console.log(JSON.stringify({
  kinds: [typeof findMisspeltSpawnOption, typeof assertNoMisspeltSpawnOption],
  found: { name: found.name, meant: found.meant, value: found.value, secret: found.secret },
  none: findMisspeltSpawnOption({ file: 'sh', title: 'tab 1' }) === undefined,
  refusal: { isTypeError: refusal instanceof TypeError, code: refusal.code, option: refusal.option, value: refusal.value ?? null, showsSecret: refusal.message.includes('secret-value') },
}))`

const expected = {
  kinds: ['function', 'function'],
  found: { name: 'cdw', meant: 'cwd', value: '/tmp', secret: false },
  none: true,
  refusal: { isTypeError: true, code: 'invalid_spawn_option', option: 'evn', value: null, showsSecret: false },
}

describe('ptykit/contracts, built, exports the misspelt-spawn-option check', { timeout: BUILD_TIMEOUT_MS }, () => {
  it('to an ES module', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', probe("import { assertNoMisspeltSpawnOption, findMisspeltSpawnOption } from 'ptykit/contracts'")], { cwd: consumer, encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual(expected)
  })

  it('to CommonJS', () => {
    const out = execFileSync(process.execPath, ['-e', probe("const { assertNoMisspeltSpawnOption, findMisspeltSpawnOption } = require('ptykit/contracts')")], { cwd: consumer, encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual(expected)
  })

  it('with its declarations, for ESM and CommonJS consumers', () => {
    for (const file of ['index.d.ts', 'index.d.cts']) {
      const declarations = fs.readFileSync(path.join(consumer, 'node_modules', 'ptykit', 'dist', 'contracts', file), 'utf8')
      expect(declarations, file).toMatch(/declare function findMisspeltSpawnOption\(options: object\): MisspeltSpawnOption \| undefined/)
      expect(declarations, file).toMatch(/declare function assertNoMisspeltSpawnOption\(options: object\): void/)
      expect(declarations, file).toMatch(/export \{[^}]*\bfindMisspeltSpawnOption\b/)
      expect(declarations, file).toMatch(/export \{[^}]*\bassertNoMisspeltSpawnOption\b/)
      expect(declarations, file).toMatch(/export \{[^}]*\btype MisspeltSpawnOption\b/)
      expect(declarations, file).toMatch(/type MisspeltSpawnOption = \{/)
    }
  })
})
