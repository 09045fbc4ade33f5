// An app that bundles ptykit (an IDE extension, an Electron app) has no `node_modules/ptykit`
// beside its bundle: the default `hostCommand` cannot be `<ptykit>/dist/pty-host/host-main.js`.
// Before: the default became `<bundle dir>/host-main.js`, which does not exist; the host exited 1
// at once and the spawn failed "the host this app started ended (exit code 1) … run its command
// to see why" — naming neither the missing file nor what to ship or pass.
import { existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundleApp, REPO_ROOT, runApp, useAppDirs } from '../support/bundled-app.js'

const appDir = useAppDirs()

const SPAWN_WITH_DEFAULT_HOST = `
import { join } from 'node:path'
import { createPtyController } from 'ptykit/controller'
import { createPtyHostProvider, defaultPtyHostCommand } from 'ptykit/pty-host'
const chain = (error: any) => { const out: any[] = []; for (let e = error; e && out.length < 5; e = e.cause) out.push({ name: e.name, code: e.code, message: String(e.message) }); return out }
async function main() {
  const command = defaultPtyHostCommand()
  const provider = createPtyHostProvider({ socketPath: join(process.cwd(), 'sock', 'host.sock'), connectTimeoutMs: 5000, idleExitMs: 500 })
  const controller = createPtyController({ provider })
  const started = Date.now()
  try {
    await controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    console.log(JSON.stringify({ command, spawned: true }))
  } catch (error) {
    console.log(JSON.stringify({ command, errors: chain(error), ms: Date.now() - started }))
  }
  await provider.dispose()
}
void main()
`

describe('a bundled app: the pty host it starts by default', () => {
  it('no host-main.js shipped: the spawn fails at once, host_unavailable naming the missing file, hostCommand and what to ship', async () => {
    const dir = appDir()
    mkdirSync(join(dir, 'sock'), { mode: 0o700 })
    const bundle = bundleApp(dir, SPAWN_WITH_DEFAULT_HOST, { external: ['node-pty', '@xterm/headless', '@xterm/addon-serialize'] })
    const result = await runApp(bundle, dir)
    const errors = result.errors as Array<{ code?: string; message: string }>
    expect(errors).toBeDefined()
    const hostError = errors.find((e) => e.code === 'host_unavailable')
    expect(hostError, JSON.stringify(errors)).toBeDefined()
    const script = join(dir, 'out', 'host-main.js')
    expect(hostError?.message).toContain(`${script} does not exist`)
    expect(hostError?.message).toContain('`hostCommand`')
    expect(hostError?.message).toContain('dist/pty-host/host-main.js')
    expect(hostError?.message).toContain('docs/pty-host.md')
  }, 20_000)

  it('a host-main.js bundled beside the app bundle is the default command (the documented way to ship it)', async () => {
    const dir = appDir()
    const bundle = bundleApp(dir, `import { defaultPtyHostCommand } from 'ptykit/pty-host'\nconsole.log(JSON.stringify(defaultPtyHostCommand()))`, { external: ['node-pty'] })
    bundleApp(dir, `import '../src/pty-host/host-main.ts'`.replace('../src', join(REPO_ROOT, 'src')), { external: ['node-pty'], name: 'host-main.js' })
    expect(existsSync(join(dir, 'out', 'host-main.js'))).toBe(true)
    expect(await runApp(bundle, dir)).toEqual({ file: process.execPath, args: [join(dir, 'out', 'host-main.js')] })
  }, 20_000)

  it('a bundle run where ptykit is installed (node_modules/ptykit above it) starts that installed host', async () => {
    const dir = appDir()
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'ptykit'))
    const bundle = bundleApp(dir, `import { defaultPtyHostCommand } from 'ptykit/pty-host'\nconsole.log(JSON.stringify(defaultPtyHostCommand()))`, { external: ['node-pty'] })
    expect(await runApp(bundle, dir)).toEqual({ file: process.execPath, args: [join(realpathSync(REPO_ROOT), 'dist', 'pty-host', 'host-main.js')] })
  }, 20_000)
})
