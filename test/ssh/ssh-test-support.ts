import { afterAll, beforeAll } from 'vitest'
import type { SshProviderOptions } from 'ptykit/ssh'
import { isDead } from '../node-pty/pty-test-support.js'
import { SSH_TEST_USER, startSshd, type SshdFixture } from './sshd-fixture.js'

/** Start one sshd for the file (beforeAll) and stop it after (afterAll); returns a getter. */
export function useSshd(options: Parameters<typeof startSshd>[0] = {}): () => SshdFixture {
  let fixture: SshdFixture | undefined
  beforeAll(async () => {
    fixture = await startSshd(options)
  }, 30_000)
  afterAll(async () => {
    await fixture?.stop()
  })
  return () => {
    if (fixture === undefined) throw new Error('the sshd fixture did not start')
    return fixture
  }
}

/** Provider options that log in to the fixture as `user` with the unencrypted authorized key. */
export function sshOptions(
  fixture: SshdFixture,
  user: string = SSH_TEST_USER,
  extra: { [K in keyof SshProviderOptions]?: SshProviderOptions[K] | undefined } = {},
): SshProviderOptions {
  const options = {
    host: fixture.host,
    port: fixture.port,
    username: user,
    privateKey: fixture.clientKeyPlain,
    knownHostsPath: fixture.knownHostsPath,
    hostId: 'ssh:loopback',
    // The provider's keepalive defaults (15 s × 3), not a tight budget: with 1 s × 2 a sshd
    // descheduled for ~3 s on a loaded machine dropped the connection, and a dropped connection
    // is, by design, no exit — the test then waited in vain for one (ssh-provider.failures.test.ts
    // reproduces both outcomes with a frozen sshd). A killed sshd is noticed at once anyway.
    ...extra,
  }
  // Why: an explicit `undefined` (a test removing an option) must drop the key.
  for (const key of Object.keys(options) as Array<keyof typeof options>) if (options[key] === undefined) delete options[key]
  return options as SshProviderOptions
}

/**
 * The remote pid of `pid` runs (loopback: the remote is this machine): it exists and is neither
 * a zombie nor being reaped. A program whose sshd session was killed is reparented to pid 1,
 * which in this sandbox reaps late: its zombie answers `kill -0` but runs nothing.
 */
export function isAlive(pid: number): boolean {
  return !isDead(pid)
}
