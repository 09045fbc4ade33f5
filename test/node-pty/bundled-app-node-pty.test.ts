// An app that bundles its code into one file (an IDE extension, an Electron app) and runs it from
// another directory. node-pty is a native module: a bundle must leave it out and ship it beside.
// Before: a bundle that inlined node-pty, or shipped without it, was told only "Install it with
// `npm install node-pty`" — though it was installed, and the app's author had bundled it in or
// left it out of what ships.
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundleApp, REPO_ROOT, runApp, useAppDirs } from '../support/bundled-app.js'
import { waitFor } from './pty-test-support.js'

const appDir = useAppDirs()

const SPAWN_THREE = `
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
const chain = (error: any) => { const out: any[] = []; for (let e = error; e && out.length < 5; e = e.cause) out.push({ name: e.name, code: e.code, message: String(e.message) }); return out }
async function main() {
  const controller = createPtyController({ provider: createNodePtyProvider() })
  const causes: unknown[] = []
  const ended = (id: string) => new Promise<void>((resolve) => controller.on('exit', (e) => { if (e.ptyId === id) { causes.push(e.cause); resolve() } }))
  try {
    for (const script of ['exit 3', 'kill -9 $$']) {
      const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', script] })
      await ended(id)
    }
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'] })
    const stopped = ended(id)
    const verified = await controller.stopAndWait!(id, { deadlineMs: Date.now() + 5000 })
    await stopped
    console.log(JSON.stringify({ causes, verified }))
  } catch (error) {
    console.log(JSON.stringify({ errors: chain(error) }))
  }
}
void main()
`

const EXIT_WITH_A_LIVE_PTY = `
import { createNodePtyProvider } from 'ptykit/node-pty'
async function main() {
  const provider = createNodePtyProvider()
  await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 300'] })
  const [row] = await provider.listProcesses()
  console.log(JSON.stringify({ pid: row?.pid }))
  process.exit(0)
}
void main()
`

function shipNodePty(dir: string): void {
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(join(REPO_ROOT, 'node_modules', 'node-pty'), join(dir, 'node_modules', 'node-pty'))
}

function nodePtyError(result: Record<string, unknown>): { code?: string; message: string } | undefined {
  return (result.errors as Array<{ code?: string; message: string }> | undefined)?.find((e) => e.code === 'node_pty_unavailable')
}

describe('a bundled app and node-pty', () => {
  it('node-pty kept external and shipped beside the bundle: exit causes, stop and the exit guard hold', async () => {
    const dir = appDir()
    shipNodePty(dir)
    const bundle = bundleApp(dir, SPAWN_THREE, { external: ['node-pty'] })
    expect(await runApp(bundle, dir)).toEqual({
      causes: [{ kind: 'exited', exitCode: 3 }, { kind: 'signaled', signal: 9 }, { kind: 'operator_close' }],
      verified: true,
    })
    const guarded = bundleApp(dir, EXIT_WITH_A_LIVE_PTY, { external: ['node-pty'], name: 'guard.js' })
    const { pid } = (await runApp(guarded, dir)) as { pid: number }
    expect(pid).toBeGreaterThan(0)
    const alive = (): boolean => {
      try {
        return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')) // a zombie is dead
      } catch {
        return false // gone
      }
    }
    await waitFor(() => (alive() ? undefined : true), `the PTY the guarded app left (pid ${pid}) to end`, 15_000)
  }, 20_000)

  it('node-pty inlined into the bundle: node_pty_unavailable says to keep it external and ship it (or pass loadNodePty)', async () => {
    const dir = appDir()
    const bundle = bundleApp(dir, SPAWN_THREE, { external: [] })
    const error = nodePtyError(await runApp(bundle, dir))
    expect(error).toBeDefined()
    expect(error?.message).toContain('--external:node-pty')
    expect(error?.message).toContain('node_modules/node-pty')
    expect(error?.message).toContain('loadNodePty')
  }, 20_000)

  it('node-pty kept external but not shipped: node_pty_unavailable says to ship it beside the bundle', async () => {
    const dir = appDir()
    const bundle = bundleApp(dir, SPAWN_THREE, { external: ['node-pty'] })
    const error = nodePtyError(await runApp(bundle, dir))
    expect(error?.message).toContain('is not installed')
    expect(error?.message).toContain('node_modules/node-pty')
  }, 20_000)
})
