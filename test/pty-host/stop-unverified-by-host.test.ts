// A stop the pty host could not complete stays unverified in the app. The host's node-pty provider
// rejects a stop it cannot prove (here: the host has no file descriptor left to read the process
// table with, so the PTY's `setsid` child is never seen) and keeps it unfinished. The app's
// provider used to answer a second `shutdown` of the ended PTY at once, without asking the host:
// the controller's forced step then "succeeded", and `stopAndWait` answered true with the child alive.
// And a second `stopAndWait` once the leader's exit was in answered true at once, from that exit
// alone (until 8 Dec, h243/h245).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { isDead, killIfStill, processIdentity, waitFor } from '../node-pty/pty-test-support.js'
import { controllerOnOwnHost, hostPid, useCleanups } from './pty-host-test-support.js'
import { requirePrlimit } from '../support/prlimit.js'

const cleanups = useCleanups()

/** `pid`'s open-file limits and how many descriptors it has open. */
function descriptorsOf(pid: number): { soft: string; hard: string; open: number } {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'))
  const [soft, hard] = line!.slice('Max open files'.length).trim().split(/\s+/)
  return { soft: soft!, hard: hard!, open: readdirSync(`/proc/${pid}/fd`).length }
}

describe('a stop the pty host could not complete', () => {
  beforeAll(requirePrlimit)

  it('is not verified by the app while a setsid child of the PTY lives', async () => {
    const { socketPath, controller } = controllerOnOwnHost(cleanups)
    controller.on('error', () => undefined) // the failed stop is reported there too
    let output = ''
    controller.on('data', ({ data }) => (output += data))
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'setsid sleep 1000 & echo "job=$!"; wait'] })
    const pid = Number(await waitFor(() => /job=(\d+)/.exec(output)?.[1], 'the job pid'))
    const job = processIdentity(pid)
    cleanups.push(async () => killIfStill(job))
    await waitFor(() => (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep' ? true : undefined), 'setsid to exec sleep')

    // The host: below the descriptors it holds, so it can open none until the limit is restored.
    const host = hostPid(socketPath)!
    const { soft, hard, open } = descriptorsOf(host)
    execFileSync('prlimit', ['--pid', String(host), `--nofile=${open - 4}:${hard}`])
    let verified: boolean
    let again: boolean
    let jobAliveAgain: boolean
    try {
      verified = await controller.stopAndWait(id, { deadlineMs: Date.now() + 3_000 })
      // Asked again (h243): the leader's exit is in by now, and the app's record of the PTY ended —
      // the second stop must not answer `true` from that exit while the host still cannot look.
      again = await controller.stopAndWait(id, { deadlineMs: Date.now() + 2_000 })
      jobAliveAgain = !isDead(pid)
    } finally {
      execFileSync('prlimit', ['--pid', String(host), `--nofile=${soft}:${hard}`])
    }
    // The host could not look for the setsid child, so it runs on — and the stop says so, twice.
    expect({ verified, again, jobAliveAgain }).toEqual({ verified: false, again: false, jobAliveAgain: true })
  })
})
