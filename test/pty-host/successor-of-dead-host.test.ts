/**
 * A host that took its lock over from a host that died holding it (SIGKILL, a crash) cannot speak
 * for what that host's sessions left running: an app that restarted holds no record of them, and
 * asks by id (helper-115's audit: `probeLiveness` answered `false` and `stopAndWait(id)` `true`
 * while a predecessor's process that ignored its hang-up still ran).
 */
import { rmSync, writeFileSync } from 'node:fs'
import { createPtyController } from 'ptykit/controller'
import { createPtyHostProvider, startPtyHost } from 'ptykit/pty-host'
import { expect, it } from 'vitest'
import { makeSocketDir, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A host on a fresh socket; with `staleLock`, one whose lock a dead host left (a pid no process has). */
async function hostOn(staleLock: boolean): Promise<string> {
  const { dir, socketPath } = makeSocketDir()
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  // Above pid_max (32 768 here, at most 4 194 304 on Linux): no process has it.
  if (staleLock) writeFileSync(`${socketPath}.lock`, '4194305\n', { mode: 0o600 })
  const host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
  cleanups.push(() => host.close())
  return socketPath
}

it.each([
  [true, null, false, false],
  [false, false, true, true],
] as const)(
  'a host started over a dead host’s lock (%s) answers %s for an id it never held; listings authoritative: %s; stopAndWait of that id: %s',
  async (staleLock, probe, authoritative, stopVerified) => {
    const socketPath = await hostOn(staleLock)
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    expect((await client.request('probe', { ptyId: 'of-the-dead-host' })).result).toBe(probe)
    const provider = createPtyHostProvider({ socketPath, autoStart: false })
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose().then(() => provider.dispose()))
    await provider.listProcesses() // connects
    expect(provider.authoritativeListings).toBe(authoritative)
    await expect(controller.probePtyLiveness('of-the-dead-host')).resolves.toBe(probe)
    await expect(controller.stopAndWait('of-the-dead-host', { timeoutMs: 2_000 })).resolves.toBe(stopVerified)
    // What this host started itself is still proven gone once it ended.
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    await expect(controller.stopAndWait(id, { timeoutMs: 5_000 })).resolves.toBe(true)
  },
)
