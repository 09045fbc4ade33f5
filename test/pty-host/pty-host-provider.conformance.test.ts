import { existsSync } from 'node:fs'
import type { PtySpawnResult } from 'ptykit/contracts'
import { isPtyHostError, stopPtyHost } from 'ptykit/pty-host'
import { describePtyProviderConformance } from 'ptykit/testing'
import { afterAll, afterEach, expect } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { hostPid, killHostAndClean, makeSocketDir, providerOn } from './pty-host-test-support.js'

// One host for the whole suite (each check gets a fresh provider, i.e. a fresh app connection).
const { dir, socketPath } = makeSocketDir()

/** Every PTY a check spawned (through the harness), for the teardown to prove gone. */
const spawnedByCheck: PtySpawnResult[] = []
/** Every pid any check spawned, for the file's teardown. */
const spawnedPids: number[] = []

/**
 * The sessions the host still runs, as another app on the host sees them (every app lists and may
 * stop every session of its host); none when no host runs.
 */
async function sessionsLeft(): Promise<string[]> {
  const sweeper = providerOn(socketPath, { autoStart: false })
  try {
    return (await sweeper.listProcesses()).map((row) => row.id)
  } catch (error) {
    if (isPtyHostError(error) && error.code === 'host_unavailable') return []
    throw error
  } finally {
    await sweeper.dispose()
  }
}

// After each check: nothing it started runs on. The harness stops what a check spawned and disposes
// its provider, but the `detach` check's provider lets go of its long-running PTY, which runs on
// in the host by design (a detached app's sessions outlive it): stopped here, as another app
// would, so no check leaves a process to the next one — and each check's PTYs are proven gone.
afterEach(async () => {
  const spawned = spawnedByCheck.splice(0)
  const left = await sessionsLeft()
  if (left.length > 0) {
    const sweeper = providerOn(socketPath, { autoStart: false })
    try {
      await Promise.all(left.map((id) => sweeper.shutdown(id, { immediate: true })))
    } finally {
      await sweeper.dispose()
    }
  }
  expect(await sessionsLeft(), 'the host runs no session after a check and its teardown').toEqual([])
  for (const { id, pid } of spawned) {
    if (pid === null || pid === undefined) continue
    await waitFor(() => (isDead(pid) ? true : undefined), `the process of PTY ${id} (pid ${pid}) to be gone after its check`)
  }
})

// After the file: no host, no socket, no process of any check, no directory.
afterAll(async () => {
  try {
    const pid = hostPid(socketPath)
    // Stopped as an app's "restart the terminal host" would (SIGTERM: it stops its sessions, removes its socket, exits).
    if (pid !== null) expect(await stopPtyHost({ socketPath }), 'the suite’s host stops').toBe(true)
    if (pid !== null) expect(isDead(pid), `the suite's host (pid ${pid}) is gone`).toBe(true)
    expect(existsSync(socketPath), 'the host’s socket is removed').toBe(false)
    for (const spawnedPid of spawnedPids) expect(isDead(spawnedPid), `the process of pid ${spawnedPid} a check spawned is gone`).toBe(true)
  } finally {
    await killHostAndClean(socketPath, dir)
  }
  expect(existsSync(dir), 'the suite’s socket directory is removed').toBe(false)
})

describePtyProviderConformance('pty-host', () => providerOn(socketPath), {
  spawnEcho: (text) => ({ file: '/bin/sh', args: ['-c', `printf '%s\\n' '${text}'`] }),
  spawnLongRunning: () => ({ file: 'cat' }),
  spawnExit: (code) => ({ file: '/bin/sh', args: ['-c', `exit ${code}`] }),
  spawnSignaled: (signal) => ({ file: '/bin/sh', args: ['-c', `kill -${signal} $$`] }),
  killFromOutside: (result) => void process.kill(result.pid!, 'SIGKILL'),
  stopReadingInput: (result) => void process.kill(result.pid!, 'SIGSTOP'),
  afterSpawn: (_provider, result) => {
    spawnedByCheck.push(result)
    if (typeof result.pid === 'number') spawnedPids.push(result.pid)
  },
  // Its `detach()`: the check leaves its long-running PTY running, which the teardown above stops.
  capabilities: { detach: true, refusesMisspeltSpawnOptions: true },
})
