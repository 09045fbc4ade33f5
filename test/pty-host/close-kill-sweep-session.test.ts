/**
 * A closing pty host's kill of what its stops left (its node-pty provider's `dispose()` at its
 * deadline; until 7 Dec close-kill.ts's own) follows the host's `nodePty.sweepSession`, as that
 * provider's stop and `killOnProcessExit` kill do.
 *
 * Found: with `sweepSession: false` (a stop signals the leader's process group only: the session's
 * other groups, background jobs, are left alone) the close still read the process table and
 * SIGKILLed every group of each stopped session — a background job that the option kept out of
 * the stop was killed by the close. Now, without a sweep, only each leader's group is killed; with
 * the default sweep the job is killed as before (the contrast: the option is what keeps it).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startPtyHost } from 'ptykit/pty-host'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { killHostAndClean, makeSocketDir, procStatOf, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe("a closing pty host's kill of its stopped sessions' leftovers", () => {
  for (const sweepSession of [false, true]) {
    it(`${sweepSession ? 'kills' : 'leaves'} a background job in a group of its own (nodePty.sweepSession ${sweepSession})`, async () => {
      const { dir, socketPath } = makeSocketDir()
      cleanups.push(() => killHostAndClean(socketPath, dir))
      // A stop deadline of 0: the provider's disposal gives up at once, and its kill at the deadline does the stopping.
      const host = await startPtyHost({ socketPath, idleExitMs: 60_000, nodePty: { sweepSession, shutdownDeadlineMs: 0 } })
      cleanups.push(() => host.close())
      const client = await rawClient(socketPath)
      cleanups.push(async () => client.close())
      const jobFile = join(dir, 'job')
      const leaderFile = join(dir, 'leader')
      // The job: a process group of its own in the PTY's session, deaf to the hang-up and SIGTERM.
      const job = `perl -e '$SIG{HUP}="IGNORE"; $SIG{TERM}="IGNORE"; setpgrp(0, 0); open(my $f, ">", "${jobFile}") or die; print $f $$; close $f; sleep 600' &`
      await client.request('spawn', { sessionId: 'with-job', file: '/bin/sh', args: ['-c', `echo $$ > ${leaderFile}; ${job} exec sleep 600`] })
      const read = (path: string): number | undefined => (existsSync(path) ? Number(readFileSync(path, 'utf8').trim()) || undefined : undefined)
      const leader = await waitFor(() => read(leaderFile), 'the leader to be up')
      const jobPid = await waitFor(() => read(jobFile), 'the job to be up')
      cleanups.push(async () => {
        try {
          process.kill(jobPid, 'SIGKILL')
        } catch {
          // Gone.
        }
      })
      const jobBefore = procStatOf(jobPid)
      // The setup is what it claims: the job is in the leader's session, in a group of its own.
      expect(jobBefore?.sid).toBe(leader)
      expect(jobBefore?.pgid).toBe(jobPid)
      await host.close()
      // The leader is stopped either way (its group is the stop's).
      await waitFor(() => (isDead(leader) ? true : undefined), 'the leader to be gone', 5_000)
      if (sweepSession) {
        await waitFor(() => (isDead(jobPid) ? true : undefined), 'the job to be killed', 5_000)
      } else {
        // The close returned after its synchronous kill: a SIGKILL sent to the job would show within moments.
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(isDead(jobPid)).toBe(false)
        expect(procStatOf(jobPid)?.startTime).toBe(jobBefore?.startTime)
      }
    }, 30_000)
  }
})
