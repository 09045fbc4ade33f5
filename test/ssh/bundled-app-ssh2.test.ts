// An app bundled into one file (an IDE extension) and run from another directory: ssh2 is loaded
// on the first connection only, and when it cannot be, the error says what a bundled app does.
// Before: an ESM bundle that inlined ssh2 (CommonJS, which requires Node's built-ins at run time:
// "Dynamic require of "net" is not supported"), or a bundle shipped without it, was told only
// "Install it with `npm install ssh2`" — though it was installed where the app was built.
import { describe, expect, it } from 'vitest'
import { bundleApp, runApp, useAppDirs } from '../support/bundled-app.js'

const appDir = useAppDirs()

const CONNECT = `
import { createSshProvider } from 'ptykit/ssh'
import { createRequire } from 'node:module'
const loaded = () => Object.keys(createRequire(import.meta.url ?? __filename).cache ?? {}).some((k) => k.includes('/ssh2/'))
async function main() {
  const provider = createSshProvider({ host: '127.0.0.1', port: 1, username: 'x', agent: '/nonexistent.sock', knownHostsPath: '/dev/null', connectTimeoutMs: 1000 })
  const loadedAtCreate = loaded()
  try {
    await provider.spawn({ file: 'true' })
    console.log(JSON.stringify({ spawned: true }))
  } catch (error: any) {
    console.log(JSON.stringify({ loadedAtCreate, code: error.code, message: String(error.message) }))
  }
  await provider.dispose?.()
}
void main()
`

describe('a bundled app and ssh2', () => {
  it('an ESM bundle that inlined ssh2: ssh2_unavailable says to keep it external and ship it (or pass loadSsh2)', async () => {
    const dir = appDir()
    const bundle = bundleApp(dir, CONNECT, { external: ['cpu-features', '*.node'], format: 'esm', name: 'extension.mjs' })
    const result = await runApp(bundle, dir)
    expect(result.code).toBe('ssh2_unavailable')
    expect(result.message).toContain('--external:ssh2')
    expect(result.message).toContain('node_modules/ssh2')
    expect(result.message).toContain('loadSsh2')
  }, 20_000)

  it('a CommonJS bundle shipped without ssh2: not loaded at creation, then ssh2_unavailable saying to ship it', async () => {
    const dir = appDir()
    const bundle = bundleApp(dir, CONNECT.replace('import.meta.url ?? __filename', '__filename'), { external: ['ssh2'] })
    const result = await runApp(bundle, dir)
    expect(result.loadedAtCreate).toBe(false)
    expect(result.code).toBe('ssh2_unavailable')
    expect(result.message).toContain('is not installed')
    expect(result.message).toContain('node_modules/ssh2')
  }, 20_000)
})
