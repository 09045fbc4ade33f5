/**
 * SSH: a write whose bytes the channel holds (the remote program does not read: its window is
 * closed) settles when the connection is lost — none of the held bytes can leave any more. Before,
 * its promise waited for the channel's `close`, which `ssh2` emits only once the channel's readable
 * side is read to its end: a consumer's pause (flow control, a renderer behind) kept it pending for
 * as long as the pause lasted — for good when the server could not be reached again (`dispose()`
 * stops, and so resumes, only the lost PTYs it can reach).
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { WriteSettlement } from 'ptykit/contracts'
import { createSshProvider, type SshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { startSshLinkProxy, type SshLinkProxy } from './ssh-link-proxy.js'
import { sshOptions, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
const KiB = 1024

/** What `settlement` is within `ms`: the settlement, or `'pending'`. */
async function within(settlement: Promise<WriteSettlement>, ms: number): Promise<WriteSettlement | 'pending'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms)
  })
  try {
    return await Promise.race([settlement, late])
  } finally {
    clearTimeout(timer)
  }
}

describe('ssh: held writes when the connection is lost', () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  async function providerThroughProxy(): Promise<{ proxy: SshLinkProxy; provider: SshProvider }> {
    const fixture = sshd()
    const proxy = await startSshLinkProxy(fixture)
    cleanups.push(() => proxy.close())
    const hostKey = fixture.hostPublicKey.split(' ')[1]
    const provider = createSshProvider({
      ...sshOptions(fixture, undefined, { knownHostsPath: undefined, hostVerifier: ({ keyBase64 }) => keyBase64 === hostKey, reconnectMaxAttempts: 0 }),
      port: proxy.port,
    })
    cleanups.push(() => provider.dispose())
    return { proxy, provider }
  }

  it('a held write of a paused PTY settles, not accepted, when the link drops', async () => {
    const { proxy, provider } = await providerThroughProxy()
    let output = ''
    provider.onData((event) => {
      output += event.data
    })
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'stty raw -echo; echo READY; sleep 0.5; head -c 65536 /dev/zero | tr "\\0" o; echo; echo LATE; exec sleep 60'] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    // The consumer is behind: reading stops (as the controller's flow control pauses a producer).
    provider.pauseProducer(id)
    const chunk = Buffer.alloc(64 * KiB, 0x62)
    let held: Promise<WriteSettlement> | undefined
    // The server's window (2 MiB for OpenSSH) and its PTY's buffer take the first few MiB.
    for (let i = 0; i < 256 && held === undefined; i += 1) {
      const settlement = provider.writeBytes(id, chunk)
      if (settlement instanceof Promise) held = settlement
      else expect(settlement).toEqual({ kind: 'accepted' })
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    expect(held).toBeDefined()
    // Output comes while paused: the channel holds it, unread (the paused stream's buffer).
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(output).not.toContain('LATE')
    proxy.dropAll()
    const settled = await within(held as Promise<WriteSettlement>, 5_000)
    expect(settled).not.toBe("pending")
    expect(settled).not.toEqual({ kind: 'accepted' })
    // Nothing more can leave: a write now is refused at once.
    expect(await provider.write(id, 'x')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
  }, 60_000)
})
