import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createNodePtyProvider, isNodePtyProviderError } from 'ptykit/node-pty'
import { interopNodePtyModule, loadNodePtyModule } from '../../src/node-pty/node-pty-module.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const spawnFn = (): never => {
  throw new Error('not called')
}

describe('loading node-pty', () => {
  it('finds spawn on the module, its default, or a doubly nested default', () => {
    const module = { spawn: spawnFn }
    expect(interopNodePtyModule(module)).toBe(module)
    expect(interopNodePtyModule({ default: module })).toBe(module)
    expect(interopNodePtyModule({ default: { default: module } })).toBe(module)
    expect(interopNodePtyModule({ default: {} })).toBeNull()
    expect(interopNodePtyModule(null)).toBeNull()
  })

  it('loads the installed node-pty through a dynamic import', async () => {
    expect(typeof (await loadNodePtyModule()).spawn).toBe('function')
  })

  it('turns a missing package into a typed error naming it and how to install it', async () => {
    const missing = Object.assign(new Error("Cannot find package 'node-pty'"), { code: 'ERR_MODULE_NOT_FOUND' })
    const error = await loadNodePtyModule(() => Promise.reject(missing)).catch((e: unknown) => e)
    expect(isNodePtyProviderError(error) && error.code).toBe('node_pty_unavailable')
    expect((error as Error).message).toContain('`node-pty`')
    expect((error as Error).message).toContain('npm install node-pty')
    expect((error as Error).message).toContain('is not installed')
    expect((error as Error).cause).toBe(missing)
  })

  it('reports a module that loads but is not node-pty, and a native load failure', async () => {
    const notPty = await loadNodePtyModule(() => Promise.resolve({ default: {} })).catch((e: unknown) => e)
    expect(isNodePtyProviderError(notPty) && notPty.code).toBe('node_pty_unavailable')
    const abi = await loadNodePtyModule(() => Promise.reject(new Error('NODE_MODULE_VERSION 115 mismatch'))).catch((e: unknown) => e)
    expect((abi as Error).message).toContain('NODE_MODULE_VERSION 115 mismatch')
  })

  it('rejects a spawn (after validating it) with the typed error, and retries the load on the next spawn', async () => {
    let attempts = 0
    const provider = createNodePtyProvider({
      loadNodePty: () => {
        attempts += 1
        return Promise.reject(Object.assign(new Error('missing'), { code: 'MODULE_NOT_FOUND' }))
      },
    })
    for (const expected of [1, 2]) {
      const error = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] }).catch((e: unknown) => e)
      expect(isNodePtyProviderError(error) && error.code).toBe('node_pty_unavailable')
      expect(attempts).toBe(expected)
    }
    await provider.dispose()
  })

  it('importing ptykit/node-pty does not load node-pty', () => {
    const probe = [
      "const { createRequire } = await import('node:module')",
      "await import('./src/node-pty/index.ts')",
      'const require = createRequire(import.meta.url)',
      "console.log(JSON.stringify(Object.keys(require.cache).filter((key) => key.includes('node-pty'))))",
    ].join(';')
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout.trim())).toEqual([])
  })
})
