// `getCwd(id, { of: 'leader' })` over SSH (OpenSSH on loopback): the shell's directory, not the
// foreground program's — as the node-pty provider answers it (test/node-pty/get-cwd-leader.test.ts),
// from the same remote /proc read as the foreground's. Found by an audit (helper-207): until 7 Dec
// the provider checked `of` and answered the foreground process's directory whatever was asked.
import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createSshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { sshOptions, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
// Loopback: the remote sees these directories (open to the login user).
const shellDir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-ssh-cwd-shell-')))
const toolDir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-ssh-cwd-tool-')))
chmodSync(shellDir, 0o755)
chmodSync(toolDir, 0o755)
afterAll(() => {
  rmSync(shellDir, { recursive: true, force: true })
  rmSync(toolDir, { recursive: true, force: true })
})

describe('SSH: getCwd of the leader', () => {
  it("answers the foreground process's directory by default, the shell's with { of: 'leader' }, through the controller and straight to the provider", async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    try {
      // An interactive shell (job control): the subshell it runs is the foreground process group.
      const { id } = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-i'], cwd: shellDir, command: `(cd ${toolDir} && exec sleep 30)` })
      await waitFor(async () => ((await controller.getCwd(id)) === toolDir ? true : undefined), 'the foreground cwd', 15_000)
      expect(await controller.getCwd(id, { of: 'foreground' })).toBe(toolDir)
      expect(await controller.getCwd(id, { of: 'leader' })).toBe(shellDir)
      expect(await provider.getCwd(id)).toBe(toolDir)
      expect(await provider.getCwd(id, { of: 'leader' })).toBe(shellDir)
      expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  }, 30_000)
})
