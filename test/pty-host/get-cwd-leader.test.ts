// `getCwd(id, { of: 'leader' })` through the pty host: the shell's directory, not the foreground
// program's — as the node-pty provider answers it (test/node-pty/get-cwd-leader.test.ts). Found by
// an audit (helper-207): until 7 Dec the app checked `of` and sent only the PTY id, and the host
// answered the foreground process's directory whatever was asked. A host of an older ptykit, which
// ignores the field, is not asked for the leader's (its answer would be the foreground's): `null`.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createPtyHostProvider } from 'ptykit/pty-host'
import { waitFor } from '../node-pty/pty-test-support.js'
import { olderHostInFrontOf, type AppMessage } from './older-host-proxy.js'
import { inProcessHost, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
const shellDir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-host-cwd-shell-')))
const toolDir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-host-cwd-tool-')))
afterAll(() => {
  rmSync(shellDir, { recursive: true, force: true })
  rmSync(toolDir, { recursive: true, force: true })
})

/** A controller over a pty host provider on `socketPath`, disposed of after the test; a shell in `shellDir` runs a program in `toolDir`. */
async function shellRunningATool(socketPath: string) {
  const provider = createPtyHostProvider({ socketPath, autoStart: false })
  const controller = createPtyController({ provider })
  cleanups.push(async () => {
    await controller.dispose()
    await provider.dispose()
  })
  // An interactive shell (job control): the subshell it runs is the foreground process group.
  const { id } = await controller.spawn({ file: '/bin/sh', args: ['-i'], cwd: shellDir, command: `(cd ${toolDir} && exec sleep 30)` })
  await waitFor(async () => ((await controller.getCwd(id)) === toolDir ? true : undefined), 'the foreground cwd')
  return { provider, controller, id }
}

describe('pty host: getCwd of the leader', () => {
  it("answers the foreground process's directory by default, the shell's with { of: 'leader' }, through the controller and straight to the provider", async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const { provider, controller, id } = await shellRunningATool(socketPath)
    expect(await controller.getCwd(id, { of: 'foreground' })).toBe(toolDir)
    expect(await controller.getCwd(id, { of: 'leader' })).toBe(shellDir)
    expect(await provider.getCwd(id)).toBe(toolDir)
    expect(await provider.getCwd(id, { of: 'leader' })).toBe(shellDir)
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
  }, 30_000)

  it("a host of an older ptykit (no `cwdOf` in its welcome) is not asked for the leader's: null, never the foreground's; the default still answers", async () => {
    const { socketPath: realSocketPath } = await inProcessHost(cleanups)
    const cwdRequests: Record<string, unknown>[] = []
    const older = await olderHostInFrontOf(cleanups, realSocketPath, {
      welcome(welcome) {
        delete welcome['cwdOf']
      },
      onAppMessage(message: AppMessage) {
        if (message.type !== 'request' || message.method !== 'cwd' || message.params === undefined) return 'forward'
        cwdRequests.push({ ...message.params })
        // Such a host ignores the field: it answers the foreground's.
        delete message.params['of']
        return { rewritten: message }
      },
    })
    const { controller, id } = await shellRunningATool(older.socketPath)
    expect(await controller.getCwd(id, { of: 'leader' })).toBeNull()
    expect(await controller.getCwd(id)).toBe(toolDir)
    // No request asked such a host for the leader's.
    expect(cwdRequests.some((params) => 'of' in params)).toBe(false)
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
  }, 30_000)
})
