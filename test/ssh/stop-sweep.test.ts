/**
 * What an SSH stop covers (docs/ssh-provider.md, Stopping): the leader, its process group and its
 * session — as the node-pty provider's stop does. Found by review (6 Dec): a stop resolved as soon
 * as the channel reported the leader's exit. Its signals reached the leader's group (OpenSSH's
 * `killpg` for a non-root login's `signal` request, the side shell's group signal for root) but
 * nothing else of the session, and nothing after that exit: a group member that ignores the
 * hang-up its leader died of, or an interactive shell's background job (a group of its own), ran
 * on while `shutdown()` — and the controller's `stopAndWait` — said the stop was done.
 *
 * Loopback: the remote is this machine, so the test finds a PTY's processes by an environment
 * variable its launch exported (inherited by everything it starts).
 */
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createSshProvider, type SshProvider, type SshProviderOptions } from 'ptykit/ssh'
import type { Ssh2Channel, Ssh2Client, Ssh2PtyRequest } from '../../src/ssh/ssh2-module.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { SSH_TEST_USER } from './sshd-fixture.js'
import { killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

const sshd = useSshd()

/** The users the fixture logs in as: OpenSSH honours `signal` requests for the first, ignores them for root. */
const USERS = [SSH_TEST_USER, 'root'] as const

/** The root login's rc files (`pyenv init`) take seconds on a loaded machine. */
const TEST_TIMEOUT_MS = 90_000

async function withProvider(user: string, extra: Partial<SshProviderOptions>, run: (provider: SshProvider) => Promise<void>): Promise<void> {
  const provider = createSshProvider(sshOptions(sshd(), user, { launchTimeoutMs: 60_000, ...extra }))
  try {
    await run(provider)
  } finally {
    await provider.dispose()
  }
}

/**
 * The real `ssh2`, whose PTY channels (the side shell's has no pty) never send a `signal` request:
 * each one signals `leader.pid` on this machine instead — a server that delivers it to the leader
 * alone.
 */
function loadSsh2SignallingLeaderOnly(leader: { pid: number | null }): () => Promise<unknown> {
  return async () => {
    const ssh2 = (await import('ssh2')) as unknown as { Client: new () => Ssh2Client }
    class LeaderOnlyClient extends ssh2.Client {
      override exec(command: string, options: { pty?: Ssh2PtyRequest | false }, callback: (error: Error | undefined, channel: Ssh2Channel) => void): boolean {
        if (options.pty === undefined || options.pty === false) return super.exec(command, options, callback)
        return super.exec(command, options, (error, channel) => {
          if (error === undefined || error === null) {
            ;(channel as { signal(name: string): void }).signal = (name) => {
              try {
                if (leader.pid !== null) process.kill(leader.pid, `SIG${name}` as NodeJS.Signals)
              } catch {
                // Gone already.
              }
            }
          }
          callback(error, channel)
        })
      }
    }
    return { Client: LeaderOnlyClient }
  }
}

describe('SSH stop: the leader\'s process group', () => {
  // No job control: the background `sleep` is a second member of the shell's group, and ignores
  // the hang-up its shell dies of. OpenSSH delivers a `signal` request to the whole group
  // (`killpg`, non-root logins) and the side shell signals the group (root logins), so the member
  // gets each signal — and survives the one that ended the leader.
  it.each(USERS)('%s, a member ignores the hang-up the leader dies of: shutdown() resolves only once it is gone', async (user) => {
    const tag = `${process.pid}-group-${user}`
    try {
      await withProvider(user, {}, async (provider) => {
        const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', `sh -c "trap '' HUP; exec sleep 300" & wait`], env: { PTYKIT_SWEEP_TAG: tag } })
        // `sleep` runs once its shell has set the trap.
        await waitFor(() => (taggedProcesses(tag).some((p) => p.comm === 'sleep') ? true : undefined), 'the sleep', 30_000)
        expect(taggedProcesses(tag).map((p) => p.pgrp)).toEqual([reply.pid, reply.pid])
        await provider.shutdown(reply.id)
        expect(taggedProcesses(tag)).toEqual([])
      })
    } finally {
      killTagged(tag)
    }
  }, TEST_TIMEOUT_MS)

  // A server that delivers a `signal` request to the leader alone (not OpenSSH: its sshd calls
  // `killpg`), stood in for by a channel whose requests signal the leader's pid on this machine
  // (loopback) instead of reaching sshd. The shell ignores HUP and TERM and dies of the KILL; its
  // `sleep` (no `exec`) ignores them too, and got no KILL.
  it('a server that signals the leader alone: the KILL still reaches the rest of its group', async () => {
    const tag = `${process.pid}-leader-only`
    const leader: { pid: number | null } = { pid: null }
    try {
      await withProvider(SSH_TEST_USER, { loadSsh2: loadSsh2SignallingLeaderOnly(leader) }, async (provider) => {
        const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', `trap '' HUP TERM; sleep 300`], env: { PTYKIT_SWEEP_TAG: tag } })
        leader.pid = reply.pid ?? null
        await waitFor(() => (taggedProcesses(tag).some((p) => p.comm === 'sleep') ? true : undefined), 'the sleep', 30_000)
        await provider.shutdown(reply.id)
        expect(taggedProcesses(tag)).toEqual([])
      })
    } finally {
      killTagged(tag)
    }
  }, TEST_TIMEOUT_MS)
})

describe('SSH stop: the session', () => {
  // An interactive shell with job control puts a background job in a process group of its own;
  // one that ignores the hang-up (as `nohup` makes it) outlives its shell, which dies of the HUP.
  it.each(USERS)('%s, an interactive bash\'s background job that ignores HUP: shutdown() resolves only once it is gone', async (user) => {
    const tag = `${process.pid}-session-${user}`
    try {
      await withProvider(user, {}, async (provider) => {
        const reply = await provider.spawn({ file: '/bin/bash', args: ['--norc', '--noprofile', '-i'], env: { PTYKIT_SWEEP_TAG: tag } })
        await provider.write(reply.id, `sh -c "trap '' HUP; exec sleep 300" &\n`)
        const job = await waitFor(() => taggedProcesses(tag).find((p) => p.comm === 'sleep'), 'the background job', 30_000)
        // In the PTY's session, in a group of its own.
        expect(job.session).toBe(reply.pid)
        expect(job.pgrp).not.toBe(reply.pid)
        await provider.shutdown(reply.id)
        expect(taggedProcesses(tag)).toEqual([])
      })
    } finally {
      killTagged(tag)
    }
  }, TEST_TIMEOUT_MS)

  it('through the controller: stopAndWait answers true only once the background job is gone too', async () => {
    const tag = `${process.pid}-session-controller`
    const provider = createSshProvider(sshOptions(sshd(), SSH_TEST_USER, { launchTimeoutMs: 60_000 }))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    try {
      const spawned = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/bash', args: ['--norc', '--noprofile', '-i'], env: { PTYKIT_SWEEP_TAG: tag } })
      await controller.write(spawned.id, `sh -c "trap '' HUP; exec sleep 300" &\n`, 'driving')
      await waitFor(() => taggedProcesses(tag).find((p) => p.comm === 'sleep'), 'the background job', 30_000)
      expect(await controller.stopAndWait(spawned.id)).toBe(true)
      expect(taggedProcesses(tag)).toEqual([])
    } finally {
      killTagged(tag)
      await controller.dispose()
      await provider.dispose()
    }
  }, TEST_TIMEOUT_MS)
})
