import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createFakePtyProvider } from 'ptykit/testing'
import { expectNoChildLeftBehind, waitFor } from './pty-test-support.js'

const provider = createNodePtyProvider()
const controller = createPtyController({ provider })
const shellDir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-cwd-shell-')))
const toolDir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-cwd-tool-')))

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
  rmSync(shellDir, { recursive: true, force: true })
  rmSync(toolDir, { recursive: true, force: true })
})

describe('getCwd: foreground (default) or leader', () => {
  it("answers the foreground process's directory by default, the shell's with { of: 'leader' }", async () => {
    // The shell stays in shellDir; the program in the foreground runs in toolDir.
    // An interactive shell (job control): the subshell it runs is the foreground process group.
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-i'], cwd: shellDir, command: `(cd ${toolDir} && exec sleep 30)` })
    await waitFor(async () => ((await controller.getCwd(id)) === toolDir ? true : undefined), 'the foreground cwd')
    expect(await controller.getCwd(id, { of: 'foreground' })).toBe(toolDir)
    expect(await controller.getCwd(id, { of: 'leader' })).toBe(shellDir)
    await expect(controller.getCwd(id, { of: 'shell' } as never)).rejects.toThrow(TypeError)
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
  })

  it('the fake passes the option through and answers the spawn cwd', async () => {
    const fake = createFakePtyProvider()
    const fakeController = createPtyController({ provider: fake })
    const { id } = await fakeController.spawn({ cwd: '/work' })
    expect(await fakeController.getCwd(id, { of: 'leader' })).toBe('/work')
    expect(fake.calls.filter((call) => call.method === 'getCwd').map((call) => call.args)).toEqual([[id, { of: 'leader' }]])
    await fakeController.dispose()
  })
})
