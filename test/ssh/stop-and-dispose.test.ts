/**
 * SSH from the consumer's side — found by a bug hunt (3 Dec): a connection that dropped during a
 * stop resolved the stop as carried out while the program survived; `dispose()` during a handshake
 * the server never answered waited the whole handshake timeout.
 */
import { createServer, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createSshProvider, isSshProviderError } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { startSshd } from './sshd-fixture.js'
import { isAlive, sshOptions, useSshd } from './ssh-test-support.js'

const sshd = useSshd()

describe('SSH: a stop across a dropped connection', () => {
  // docs/ssh-provider.md, Failure model: "A dropped connection is never an exit. [...] a stop rejects
  // with `transport_lost`"; Stopping: "4. the stop resolves when the channel reported the exit, and
  // rejects with `shutdown_timeout` at the deadline otherwise."
  it('a connection that drops during a stop does not resolve the stop as carried out', async () => {
    const server = await startSshd()
    // Keepalive gives the link up ~1 s into a stall; the stop's TERM is not due for 4 s.
    const provider = createSshProvider(
      sshOptions(server, undefined, {
        reconnectMaxAttempts: 0,
        keepaliveIntervalMs: 500,
        keepaliveCountMax: 1,
        hangupGraceMs: 4_000,
        terminateGraceMs: 4_000,
        shutdownDeadlineMs: 20_000,
      }),
    )
    let pid: number | undefined
    try {
      let output = ''
      provider.onData((event) => {
        output += event.data
      })
      const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP TERM; echo armed; while :; do sleep 0.2; done"] })
      pid = reply.pid ?? undefined
      // Why wait: the spawn answers once the program started, before its traps are set; a hang-up
      // sent then kills it (signaled(1), a true verdict, but not the stop this test is about).
      await waitFor(() => (output.includes('armed') ? true : undefined), 'the traps to be set', 10_000)
      const stopping = provider.shutdown(reply.id).then(
        () => 'resolved',
        (error: unknown) => (isSshProviderError(error) ? error.code : String(error)),
      )
      // The hang-up is sent (and ignored); then the server stops answering: nothing crosses the link.
      await new Promise((resolve) => setTimeout(resolve, 300))
      await server.stall(3_000)
      expect(await stopping).toBe('transport_lost')
      expect(provider.hasPty(reply.id)).toBe(null)
      // It did survive: the stop was not carried out.
      expect(pid !== undefined && isAlive(pid)).toBe(true)
    } finally {
      if (pid !== undefined && isAlive(pid)) process.kill(pid, 'SIGKILL')
      await provider.dispose()
      await server.stop()
    }
  }, 60_000)
})

describe('SSH: dispose during a handshake', () => {
  it('dispose() while the server never answers the handshake settles promptly; the spawn is refused as disposed', async () => {
    const sockets: Socket[] = []
    const silent = createServer((socket) => sockets.push(socket)) // accepts TCP, never speaks SSH
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const address = silent.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    const provider = createSshProvider({ ...sshOptions(sshd()), port: address.port, handshakeTimeoutMs: 8_000 })
    try {
      const spawning = provider.spawn({ file: '/bin/true' }).then(
        () => 'spawned',
        (error: unknown) => (isSshProviderError(error) ? error.code : String(error)),
      )
      await waitFor(() => (sockets.length > 0 ? true : undefined), 'the TCP connection')
      const started = Date.now()
      await provider.dispose()
      const disposeMs = Date.now() - started
      expect(await spawning).toBe('provider_disposed')
      expect(disposeMs).toBeLessThan(2_000)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  }, 30_000)
})

describe('SSH: a terminal handle', () => {
  it('spawnTerminal over SSH: output() ends after the exit, exited carries the signal', async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    const controller = createPtyController({ providers: { 'ssh:loopback': provider } })
    try {
      const terminal = await controller.spawnTerminal({ hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', 'echo hello; sleep 0.3; kill -TERM $$'] })
      let text = ''
      for await (const chunk of terminal.output()) text += chunk
      expect(text).toContain('hello')
      await expect(terminal.exited).resolves.toMatchObject({ cause: { kind: 'signaled', signal: 15 } })
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  }, 30_000)
})
