// A `shutdown` of a PTY whose leader already died while the host's stop of it still runs (its answer
// not back yet). Here the host is out of file descriptors, so its stop signals the leader without
// having seen the leader's session: a `setsid` child of the PTY lives on unseen, and the host's stop
// ends `shutdown_timeout` (see stop-unverified-by-host). The app's provider used to answer such a
// second `shutdown` at once, without asking the host, as for any ended PTY (only `dispose()` joined a
// stop in flight): a controller whose forced step came in that window — the graceful stop still
// running on the host, the leader's exit already reported — took the forced step as done, found the
// PTY unlisted and answered `stopAndWait` true with the child alive. Which signals the host's stop
// sends and when (a late hang-up shifting the rest) only moves that window; it does not make it.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import type { PtyExitEvent } from 'ptykit/contracts'
import type { PtyHostProvider } from 'ptykit/pty-host'
import { isDead, killIfStill, processIdentity, waitFor } from '../node-pty/pty-test-support.js'
import { hostPid, killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'
import { requirePrlimit } from '../support/prlimit.js'

const cleanups = useCleanups()

/** A provider on a host of its own, and a controller over it forcing after `forceAfterMs`. */
function ownHost(forceAfterMs: number): { socketPath: string; provider: PtyHostProvider; controller: PtyController } {
  const { dir, socketPath } = makeSocketDir()
  cleanups.push(() => killHostAndClean(socketPath, dir))
  const provider = providerOn(socketPath)
  cleanups.push(() => provider.dispose())
  const controller = createPtyController({ provider, stop: { forceAfterMs } })
  cleanups.push(() => controller.dispose())
  controller.on('error', () => undefined) // the failed stop is reported there too
  return { socketPath, provider, controller }
}

/** Spawn a PTY whose shell starts a `setsid` child and waits (dying of the hang-up); the child's pid. */
async function spawnWithSetsidChild(controller: PtyController): Promise<{ id: string; job: number }> {
  let output = ''
  controller.on('data', ({ data }) => (output += data))
  const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'setsid sleep 1000 & echo "job=$!"; wait'] })
  const job = Number(await waitFor(() => /job=(\d+)/.exec(output)?.[1], 'the job pid'))
  const identity = processIdentity(job)
  cleanups.push(async () => killIfStill(identity))
  await waitFor(() => (readFileSync(`/proc/${job}/comm`, 'utf8').trim() === 'sleep' ? true : undefined), 'setsid to exec sleep')
  return { id, job }
}

/** Run `body` with the host unable to open a file descriptor (below the ones it holds), then restore its limit. */
async function outOfDescriptors<T>(socketPath: string, body: () => Promise<T>): Promise<T> {
  const host = hostPid(socketPath)!
  const line = readFileSync(`/proc/${host}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'))
  const [soft, hard] = line!.slice('Max open files'.length).trim().split(/\s+/)
  const open = readdirSync(`/proc/${host}/fd`).length
  execFileSync('prlimit', ['--pid', String(host), `--nofile=${open - 4}:${hard}`])
  try {
    return await body()
  } finally {
    execFileSync('prlimit', ['--pid', String(host), `--nofile=${soft}:${hard}`])
  }
}

describe("a shutdown of an ended PTY while the host's stop of it still runs", () => {
  beforeAll(requirePrlimit)

  it('goes to the host and gets its answer, not resolved at once', async () => {
    const { socketPath, provider, controller } = ownHost(60_000)
    const { id, job } = await spawnWithSetsidChild(controller)
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    const outcome = await outOfDescriptors(socketPath, async () => {
      const graceful = provider.shutdown(id, { timeoutMs: 3_000 }).then(
        () => 'resolved',
        (error: { code?: string; hostCode?: string }) => `refused ${error.code} ${error.hostCode}`,
      )
      // The hang-up ended the leader; the host's stop is still running (its answer not back).
      await waitFor(() => exits[0], "the leader's exit")
      // (Checked after a turn, so an answer that had already arrived is seen.)
      let gracefulAnswered = false
      void graceful.then(() => (gracefulAnswered = true))
      await new Promise((resolve) => setImmediate(resolve))
      const pendingAtForce = !gracefulAnswered
      const forced = await provider.shutdown(id, { immediate: true }).then(
        () => 'resolved',
        (error: { code?: string; hostCode?: string }) => `refused ${error.code} ${error.hostCode}`,
      )
      return { pendingAtForce, forced, graceful: await graceful }
    })
    expect(exits[0]).toMatchObject({ id, cause: { kind: 'signaled', signal: 1 } })
    // The setsid child was never seen: neither stop is done, and the forced one says so too.
    expect({ ...outcome, jobAlive: !isDead(job) }).toEqual({
      pendingAtForce: true,
      forced: 'refused host_error shutdown_timeout',
      graceful: 'refused host_error shutdown_timeout',
      jobAlive: true,
    })
  }, 30_000)

  it("keeps a controller's stopAndWait false when its forced step comes in that window", async () => {
    // The host's stop: its hang-up goes out ~500 ms in (it waits that long for a readable table),
    // the leader dies of it, and the stop ends refused ~1 s in (the KILL step). The force at 750 ms
    // lands between the two — the window the late-signal shift (a286c09) widened past the 1.5 s force.
    const { socketPath, provider, controller } = ownHost(750)
    const { id, job } = await spawnWithSetsidChild(controller)
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    const verified = await outOfDescriptors(socketPath, () => controller.stopAndWait(id, { deadlineMs: Date.now() + 3_000 }))
    expect({ verified, exited: exits.length, jobAlive: !isDead(job) }).toEqual({ verified: false, exited: 1, jobAlive: true })
  }, 30_000)
})
