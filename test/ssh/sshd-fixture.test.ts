/**
 * The SSH tests' server fixture survives a port taken between the OS saying it is free and sshd
 * binding it — the other test files' connections take ephemeral ports from the same range. Found
 * by review (helper-188): sshd exited at start ("Address already in use") and the test file failed
 * before its first test; a restart (same port) whose port was taken failed at once, naming nothing.
 * Here a `net.Server` of the test holds the port the fixture is about to bind.
 */
import { createServer, connect, type Server } from 'node:net'
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { ensureSlowRcUser, SSH_SLOW_RC_USER, slowLoginRc, startSshd, type SshdFixture } from './sshd-fixture.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A server of this test holding a port on 127.0.0.1 (`0`: one the OS picks), closed after the test. */
async function holdPort(port = 0): Promise<{ port: number; release: () => Promise<void> }> {
  const server: Server = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  let released: Promise<void> | undefined
  const release = (): Promise<void> => (released ??= new Promise((resolve) => server.close(() => resolve())))
  cleanups.push(release)
  return { port: address.port, release }
}

/** A port free now (held, then released at once): what the fixture's own choice does. */
async function portFreeNow(): Promise<number> {
  const { port, release } = await holdPort()
  await release()
  return port
}

/** The first line a server on `port` sends: sshd's identification (`SSH-2.0-OpenSSH_…`). */
function banner(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
      if (received.includes('\n')) {
        socket.destroy()
        resolve(received.split('\r\n')[0]!)
      }
    })
    socket.once('error', reject)
  })
}

async function started(options: Parameters<typeof startSshd>[0]): Promise<SshdFixture> {
  const sshd = await startSshd(options)
  cleanups.push(() => sshd.stop())
  return sshd
}

describe('sshd fixture: a port taken before sshd binds it', () => {
  it('a first start whose port is taken listens on a fresh one, and its known_hosts name that one', async () => {
    const held = await holdPort()
    let asked = 0
    // The first port offered is the held one: as if another process took it after the OS said it was free.
    const sshd = await started({ choosePort: async () => (asked++ === 0 ? held.port : await portFreeNow()) })
    expect(asked).toBeGreaterThanOrEqual(2)
    expect(sshd.port).not.toBe(held.port)
    expect(sshd.log()).toContain(`Bind to port ${held.port} on 127.0.0.1 failed: Address already in use`)
    expect(await banner(sshd.port)).toMatch(/^SSH-2\.0-OpenSSH/)
    expect(readFileSync(sshd.knownHostsPath, 'utf8')).toBe(`[127.0.0.1]:${sshd.port} ${sshd.hostPublicKey}\n`)
    expect(readFileSync(sshd.wrongKnownHostsPath, 'utf8')).toMatch(new RegExp(`^\\[127\\.0\\.0\\.1\\]:${sshd.port} `))
  }, 30_000)

  it('a restart whose port is taken meanwhile waits for it, and listens on the same port once it is free', async () => {
    const sshd = await started({})
    await sshd.killAll()
    // Taken between the kill and the restart, and let go a moment after the restart began.
    const held = await holdPort(sshd.port)
    const restarted = sshd.restart()
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    await held.release()
    await restarted
    expect(sshd.log()).toContain(`Bind to port ${sshd.port} on 127.0.0.1 failed: Address already in use`)
    expect(await banner(sshd.port)).toMatch(/^SSH-2\.0-OpenSSH/)
  }, 30_000)

  it('a restart whose port stays taken fails after its bound, naming the port and what holds it', async () => {
    const sshd = await started({ restartBindTimeoutMs: 1_000 })
    await sshd.killAll()
    await holdPort(sshd.port)
    const failure = await sshd.restart().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Error)
    const message = (failure as Error).message
    expect(message).toContain(`sshd could not listen again on port ${sshd.port}`)
    // This test's own server is the holder: ss names its process.
    expect(message).toContain(`127.0.0.1:${sshd.port}`)
    expect(message).toContain(`pid=${process.pid},`)
  }, 30_000)
})

describe('sshd fixture: a slow login\'s flag', () => {
  it('dies with its server: a later server on the same port, in this run or another, logs in at full speed', async () => {
    ensureSlowRcUser()
    const first = await startSshd()
    // Raised and never taken down, as by a test whose worker was torn down, or a run that was killed.
    slowLoginRc(first, 600)
    await first.stop()
    // The next server on that port (the OS hands ports out again): held from now, let go as it starts.
    const held = await holdPort(first.port)
    const second = await started({
      choosePort: async () => {
        await held.release()
        return first.port
      },
    })
    expect(second.port, 'the second server did not get the first one\'s port: nothing was tested').toBe(first.port)
    // Before: the flag was /tmp/ptykit-slow-rc/<port>, outside any run's scratch directory, and
    // this login slept its 600 s (cut short here at 30 s).
    const login = spawnSync(
      'ssh',
      ['-p', String(second.port), '-i', second.clientKeyPlainPath, '-o', `UserKnownHostsFile=${second.knownHostsPath}`, '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', `${SSH_SLOW_RC_USER}@127.0.0.1`, 'echo logged-in'],
      { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' },
    )
    expect({ status: login.status, stdout: login.stdout }, login.stderr).toEqual({ status: 0, stdout: 'logged-in\n' })
  }, 60_000)
})
