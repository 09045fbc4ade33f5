/**
 * OpenSSH's sshd drops a new connection without a word (no SSH banner) once `MaxStartups`
 * connections are waiting for authentication — other clients connecting at once. The spawn fails
 * `connection_failed`, and the message names the limit: found by audit (helper-157), it said only
 * "Connection lost before handshake". Each test has its own sshd and kills it after.
 */
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSshProvider, isSshProviderError } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { sshOptions } from './ssh-test-support.js'
import { startSshd } from './sshd-fixture.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('SSH provider on a server at its MaxStartups limit', () => {
  it('fails the spawn with connection_failed naming MaxStartups', async () => {
    // Beyond 2 unauthenticated connections, sshd drops every new one.
    const sshd = await startSshd({ maxStartups: '2:100:2' })
    cleanups.push(() => sshd.stop())
    // Two clients that connected and never authenticate hold both slots (for LoginGraceTime).
    const holders: Socket[] = [connect(sshd.port, sshd.host), connect(sshd.port, sshd.host)]
    cleanups.push(() => holders.forEach((socket) => socket.destroy()))
    await waitFor(() => (sshd.connections() === 2 ? true : undefined), 'sshd to accept the two silent clients')
    const provider = createSshProvider(sshOptions(sshd))
    cleanups.push(() => provider.dispose())
    const error = await provider.spawn({ file: '/bin/true' }).catch((caught: unknown) => caught)
    expect(isSshProviderError(error) && error.code).toBe('connection_failed')
    expect((error as Error).message).toMatch(/MaxStartups/)
    // That it was sshd's MaxStartups drop: its log says so (written when it drops, which the client
    // may see before the line reaches the log — CI read the log first once).
    await waitFor(() => (/past MaxStartups/.test(sshd.log()) ? true : undefined), 'sshd to log its MaxStartups drop')
  }, 30_000)
})
