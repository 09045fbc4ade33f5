// How an optional peer that cannot be loaded is reported (src/contracts/optional-peer.ts): a peer
// that is not installed, and one that is installed but misses a module of its own (fast-check
// without pure-rand), are told apart, and the missing module is named. The peers here are real
// packages in a temporary node_modules, loaded by Node (ESM and CommonJS).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { loadOptionalPeer, requireOptionalPeer, type OptionalPeerLoad } from '../../src/contracts/optional-peer.js'

const root = mkdtempSync(path.join(tmpdir(), 'ptykit-optional-peer-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Writes `node_modules/{name}` under the temporary root: a package whose entry imports `imports`. */
function installPackage(name: string, { type, imports }: { type: 'module' | 'commonjs'; imports: string }): void {
  const dir = path.join(root, 'node_modules', name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, type, main: 'index.js' }))
  const body = type === 'module' ? `import ${JSON.stringify(imports)}\nexport const spawn = () => {}\n` : `require(${JSON.stringify(imports)})\nexports.spawn = () => {}\n`
  writeFileSync(path.join(dir, 'index.js'), body)
}
installPackage('esm-peer', { type: 'module', imports: 'esm-peer-dependency' })
installPackage('cjs-peer', { type: 'commonjs', imports: 'cjs-peer-dependency' })
installPackage('@scoped/peer', { type: 'module', imports: '@scoped/peer-dependency' })
// An app's file beside that node_modules: its imports resolve there, as a host app's do.
const appFile = path.join(root, 'app.mjs')
writeFileSync(appFile, 'export const load = (specifier) => import(specifier)\n')
const requireFromApp = createRequire(appFile)

const load = (specifier: string, peer?: string): Omit<OptionalPeerLoad, 'loader'> => ({
  isModule: (candidate) => typeof (candidate as { spawn?: unknown }).spawn === 'function',
  lacks: 'has no `spawn` function',
  unavailable: (cause, why) => Object.assign(new Error(`needs \`${specifier}\`, which ${why}`), { cause }),
  ...(peer === undefined ? {} : { peer }),
})
const importFromApp = async (specifier: string): Promise<unknown> => {
  const app = (await import(pathToFileURL(appFile).href)) as { load: (specifier: string) => Promise<unknown> }
  return app.load(specifier)
}
const failureOf = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => {
      throw new Error('loaded')
    },
    (error: unknown) => error as Error,
  )

describe('an optional peer that cannot be loaded', () => {
  it.each([
    ['ESM', 'esm-peer', 'esm-peer-dependency'],
    ['CommonJS, imported', 'cjs-peer', 'cjs-peer-dependency'],
    ['ESM, scoped', '@scoped/peer', '@scoped/peer-dependency'],
  ])('installed, but missing a module of its own (%s): says so and names the module', async (_how, peer, dependency) => {
    for (const given of [undefined, peer]) {
      const failure = await failureOf(loadOptionalPeer({ ...load(peer, given), loader: () => importFromApp(peer) }))
      expect(failure.message).toBe(`needs \`${peer}\`, which is installed, but a module it needs is missing: \`${dependency}\` (imported by \`${peer}\`)`)
      expect(failure.message).not.toContain('is not installed')
      expect((failure.cause as { code?: string }).code).toMatch(/MODULE_NOT_FOUND$/)
    }
  })

  it('installed, but missing a module of its own (CommonJS, required): says so and names the module', async () => {
    const failure = await failureOf(Promise.resolve().then(() => requireOptionalPeer({ ...load('cjs-peer'), loader: () => requireFromApp('cjs-peer') })))
    expect(failure.message).toBe('needs `cjs-peer`, which is installed, but a module it needs is missing: `cjs-peer-dependency` (imported by `cjs-peer`)')
  })

  it('not installed (ESM and CommonJS): "is not installed"', async () => {
    const imported = await failureOf(loadOptionalPeer({ ...load('absent-peer'), loader: () => importFromApp('absent-peer') }))
    expect(imported.message).toBe('needs `absent-peer`, which is not installed')
    const required = await failureOf(Promise.resolve().then(() => requireOptionalPeer({ ...load('absent-peer'), loader: () => requireFromApp('absent-peer') })))
    expect(required.message).toBe('needs `absent-peer`, which is not installed')
  })

  it('not installed, imported from an installed ptykit or from a package that bundled ptykit and names the peer: "is not installed"', async () => {
    const notFound = (importer: string) => Object.assign(new Error(`Cannot find package 'absent-peer' imported from ${importer}`), { code: 'ERR_MODULE_NOT_FOUND' })
    const fromPtykit = await failureOf(loadOptionalPeer({ ...load('absent-peer'), loader: () => Promise.reject(notFound('/app/node_modules/ptykit/dist/ssh/index.js')) }))
    expect(fromPtykit.message).toBe('needs `absent-peer`, which is not installed')
    const fromBundle = await failureOf(
      loadOptionalPeer({ ...load('absent-peer', 'absent-peer'), loader: () => Promise.reject(notFound('/app/node_modules/.pnpm/lib@1.0.0/node_modules/lib/dist/index.js')) }),
    )
    expect(fromBundle.message).toBe('needs `absent-peer`, which is not installed')
  })
})
