import { afterAll, beforeAll, expect, it } from 'vitest'
import { startSshd, SSH_TEST_USER, type SshdFixture } from '../test/ssh/sshd-fixture.js'
import { runSshHostDemo } from './ssh-host.js'

let sshd: SshdFixture
beforeAll(async () => {
  sshd = await startSshd()
}, 30_000)
afterAll(() => sshd.stop())

it('settles the same causes on the local host and over SSH', async () => {
  const rows = await runSshHostDemo({
    host: sshd.host,
    port: sshd.port,
    username: SSH_TEST_USER,
    privateKey: sshd.clientKeyPlain,
    knownHostsPath: sshd.knownHostsPath,
  })
  expect(rows).toEqual([
    { program: 'exit 3', local: expect.stringContaining('3'), ssh: expect.stringContaining('3') },
    { program: 'kill -TERM $$', local: expect.stringContaining('signal 15'), ssh: expect.stringContaining('signal 15') },
    { program: 'ignores HUP+TERM, stopped', local: expect.any(String), ssh: expect.any(String) },
  ])
  for (const row of rows) expect(row.ssh).toBe(row.local)
}, 60_000)
