/**
 * An Electron app starting its pty host with its own binary (`process.execPath`, which every host
 * command names by default): without `ELECTRON_RUN_AS_NODE` that binary runs the app again (a
 * second window, or the host script as an Electron main process) instead of the host. The launcher
 * adds it, marked, and the host removes it before its PTYs inherit its environment.
 *
 * Electron is simulated: `process.versions.electron` set, and `process.execPath` pointed at a
 * stand-in binary that records the environment it was started with.
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPtyController } from 'ptykit/controller'
import { launchPtyHost } from 'ptykit/pty-host'
import { afterEach, describe, expect, it } from 'vitest'
import { forgetLauncherRunAsNode, ptyHostLaunchEnv, PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE } from '../../src/pty-host/launch-pty-host.js'
import { killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
const realExecPath = process.execPath

/** Run as an Electron app for this test; undone after it (test files share one worker's globals). */
function simulateElectron(execPath = realExecPath): void {
  Object.defineProperty(process.versions, 'electron', { value: '33.2.0', configurable: true, enumerable: true })
  process.execPath = execPath
}
afterEach(() => {
  delete (process.versions as Record<string, string | undefined>).electron
  process.execPath = realExecPath
})

async function fileAppears(path: string): Promise<string> {
  const giveUpAt = performance.now() + 10_000
  while (!existsSync(path) || readFileSync(path, 'utf8') === '') {
    if (performance.now() > giveUpAt) throw new Error(`${path} did not appear within 10 s`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  return readFileSync(path, 'utf8')
}

describe('the environment a host is launched with', () => {
  const runtime = (electronVersion: string | undefined, env: NodeJS.ProcessEnv = { PATH: '/usr/bin' }) => ({ execPath: '/opt/App/app', electronVersion, env })

  it('in an Electron app starting its own binary: ELECTRON_RUN_AS_NODE=1, marked as added', () => {
    expect(ptyHostLaunchEnv('/opt/App/app', runtime('33.2.0'))).toEqual({ PATH: '/usr/bin', ELECTRON_RUN_AS_NODE: '1', [PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE]: '1' })
    expect(ptyHostLaunchEnv('/opt/App/app', runtime('33.2.0', { ELECTRON_RUN_AS_NODE: '' }))).toMatchObject({ ELECTRON_RUN_AS_NODE: '1' })
  })

  it('inherited unchanged under Node, for another program, and in an app already running as Node (an extension host)', () => {
    expect(ptyHostLaunchEnv('/opt/App/app', runtime(undefined))).toBeUndefined()
    expect(ptyHostLaunchEnv('/usr/bin/node', runtime('33.2.0'))).toBeUndefined()
    expect(ptyHostLaunchEnv('/opt/App/app', runtime('33.2.0', { ELECTRON_RUN_AS_NODE: '1' }))).toBeUndefined()
  })

  it('the host forgets the variable only when its launcher added it', () => {
    const added: NodeJS.ProcessEnv = { PATH: '/usr/bin', ELECTRON_RUN_AS_NODE: '1', [PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE]: '1' }
    forgetLauncherRunAsNode(added)
    expect(added).toEqual({ PATH: '/usr/bin' })
    const apps: NodeJS.ProcessEnv = { PATH: '/usr/bin', ELECTRON_RUN_AS_NODE: '1' }
    forgetLauncherRunAsNode(apps)
    expect(apps).toEqual({ PATH: '/usr/bin', ELECTRON_RUN_AS_NODE: '1' })
  })

  it('launchPtyHost in an Electron app starts its binary with ELECTRON_RUN_AS_NODE=1 (before: without it, so the app ran again)', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const appBinary = join(dir, 'electron-app')
    writeFileSync(appBinary, `#!/bin/sh\nenv > '${appBinary}.env'\n`)
    chmodSync(appBinary, 0o755)
    simulateElectron(appBinary)
    launchPtyHost({ file: process.execPath, args: ['host-main.js'] }, { socketPath })
    const env = (await fileAppears(`${appBinary}.env`)).split('\n')
    expect(env).toContain('ELECTRON_RUN_AS_NODE=1')
    expect(env).toContain(`${PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE}=1`)
  })
})

it("a host an Electron app started gives its PTYs the app's environment, without the ELECTRON_RUN_AS_NODE it was started with", async () => {
  const { dir, socketPath } = makeSocketDir()
  cleanups.push(() => killHostAndClean(socketPath, dir))
  simulateElectron()
  const provider = providerOn(socketPath)
  cleanups.push(() => provider.dispose())
  const controller = createPtyController({ provider })
  cleanups.push(() => controller.dispose())
  let output = ''
  controller.on('data', ({ data }) => (output += data))
  const exited = new Promise((resolve) => controller.once('exit', resolve))
  await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo "[RUN_AS_NODE=${ELECTRON_RUN_AS_NODE-unset}] [MARK=${' + PTY_HOST_ADDED_RUN_AS_NODE_VARIABLE + '-unset}]"'] })
  await exited
  expect(output).toContain('[RUN_AS_NODE=unset] [MARK=unset]')
})
