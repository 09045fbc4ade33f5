/**
 * SSH from the consumer's side — found by a bug hunt (3 Dec): a connection that dropped during a
 * stop resolved the stop as carried out while the program survived; `dispose()` during a handshake
 * the server never answered waited the whole handshake timeout.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createSshProvider, isSshProviderError, type SshProvider } from 'ptykit/ssh'
import { SSH_SIGNAL_REQUEST_VERIFY_MS } from '../../src/ssh/ssh-stop.js'
import type { Ssh2Channel, Ssh2Client, Ssh2PtyRequest } from '../../src/ssh/ssh2-module.js'
import { killIfStill, processIdentity, waitFor, type ProcessIdentity } from '../node-pty/pty-test-support.js'
import { startSshd } from './sshd-fixture.js'
import { isAlive, ssh2HoldingLaunchOutput, sshOptions, useSshd } from './ssh-test-support.js'

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
    let started: ProcessIdentity | null = null
    try {
      let output = ''
      provider.onData((event) => {
        output += event.data
      })
      const reply = await provider.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP TERM; echo armed; while :; do sleep 0.2; done"] })
      pid = reply.pid ?? undefined
      started = pid === undefined ? null : processIdentity(pid)
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
      killIfStill(started)
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

/** Where a PTY's spawn is when the test disposes its provider. */
type DisposeMoment = 'exec request sent' | 'channel opened' | 'first output'

/**
 * The real `ssh2`, with one hook on the first PTY channel (the side shell's channel has no pty):
 * `dispose` is called the moment the spawn reaches `moment` — its exec request just sent, its
 * channel just handed over (before the provider sees it), or its first output (the launch marker)
 * just arrived (before the provider reads it). The connection and the server are untouched.
 */
function loadSsh2DisposingAt(moment: DisposeMoment, dispose: () => void): () => Promise<unknown> {
  return async () => {
    const ssh2 = (await import('ssh2')) as unknown as { Client: new () => Ssh2Client }
    let armed = true
    class DisposingClient extends ssh2.Client {
      override exec(command: string, options: { pty?: Ssh2PtyRequest | false }, callback: (error: Error | undefined, channel: Ssh2Channel) => void): boolean {
        if (!armed || options.pty === undefined || options.pty === false) return super.exec(command, options, callback)
        armed = false
        if (moment === 'exec request sent') {
          const sent = super.exec(command, options, callback)
          dispose()
          return sent
        }
        return super.exec(command, options, (error, channel) => {
          if (error !== undefined && error !== null) return callback(error, channel)
          if (moment === 'channel opened') dispose()
          else disposeAtFirstOutput(channel, dispose)
          callback(error, channel)
        })
      }
    }
    return { Client: DisposingClient }
  }
}

/** Call `dispose` when the first chunk of `channel`'s output arrives, before its reader sees it. */
function disposeAtFirstOutput(channel: Ssh2Channel, dispose: () => void): void {
  const on = channel.on.bind(channel) as (event: string, listener: (...args: never[]) => void) => Ssh2Channel
  let seen = false
  ;(channel as { on: typeof on }).on = (event, listener) => {
    if (event !== 'data') return on(event, listener)
    return on('data', (chunk: Buffer) => {
      if (!seen) {
        seen = true
        dispose()
      }
      ;(listener as (chunk: Buffer) => void)(chunk)
    })
  }
}

/** The live processes whose environment holds `PTYKIT_DISPOSE_TAG=<tag>` (loopback: the remote is this machine). */
function taggedProcesses(tag: string): number[] {
  const entry = `PTYKIT_DISPOSE_TAG=${tag}\0`
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let environ: string
    try {
      environ = readFileSync(`/proc/${name}/environ`, 'latin1')
    } catch {
      continue // Gone meanwhile.
    }
    if (environ.includes(entry) && isAlive(Number(name))) found.push(Number(name))
  }
  return found
}

describe('SSH: dispose while a spawn is in flight', () => {
  // Found by an audit: a spawn overtaken by `dispose()` on a live connection rejected with
  // `transport_lost` ("The SSH connection dropped") or `spawn_failed`, or resolved after the
  // disposal had begun — nothing had dropped; the provider was disposed.
  it.each<DisposeMoment>(['exec request sent', 'channel opened', 'first output'])(
    'disposed when the spawn\'s %s: the spawn rejects with provider_disposed, and its program is stopped',
    async (moment) => {
      const tag = `${process.pid}-${moment.replaceAll(' ', '-')}`
      let provider: SshProvider | undefined
      let disposing: Promise<void> | undefined
      provider = createSshProvider(sshOptions(sshd(), undefined, { loadSsh2: loadSsh2DisposingAt(moment, () => (disposing = provider?.dispose())) }))
      try {
        // Ignores the hang-up and TERM (a single process: `exec`): only the KILL of a stop ends it.
        const spawning = provider.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP TERM; exec sleep 300"], env: { PTYKIT_DISPOSE_TAG: tag } })
        const error = await spawning.then(
          () => undefined,
          (rejection: unknown) => rejection,
        )
        expect(disposing).toBeDefined()
        await disposing
        expect(isSshProviderError(error)).toBe(true)
        expect(error).toMatchObject({ code: 'provider_disposed', processMayExist: false })
        // Once its channel opened, its launch ran on the server: a controller's spawn says
        // `rolled_back`, never `not_started` (helper-137 found such programs running).
        if (moment !== 'exec request sent') expect(error).toMatchObject({ processStarted: true, message: expect.stringContaining('it had started, and the disposal stopped it') })
        expect((error as Error).message).toContain('"/bin/sh"')
        expect((error as Error).message).toContain('disposed while the spawn was in flight')
        // The disposal stopped it: nothing it started runs on the server.
        expect(taggedProcesses(tag)).toEqual([])
      } finally {
        for (const pid of taggedProcesses(tag)) process.kill(pid, 'SIGKILL')
        await provider.dispose()
      }
    },
    30_000,
  )
})

/**
 * The real `ssh2`, with one hook on the first PTY channel: `dispose` is called as the channel is
 * handed over; the channel's `signal` requests are dropped, as OpenSSH silently drops them for a
 * root login (docs/ssh-provider.md, Stopping); and its output — the launch marker first — reaches
 * the provider only `markerDelayMs` after the stop's KILL request, as from a login shell whose rc
 * files take that long. So only the KILL to the remote process group, from the side shell once
 * the marker named the pid, can stop the program.
 */
function loadSsh2WithLateMarker(dispose: () => void, markerDelayMs: number): () => Promise<unknown> {
  let releasing = false
  return ssh2HoldingLaunchOutput({
    opened: dispose,
    // Not sent: dropped, as OpenSSH drops signal requests for root.
    onSignal: (name, _send, release) => {
      if (name !== 'KILL' || releasing) return
      releasing = true
      setTimeout(release, markerDelayMs)
    },
  })
}

describe('SSH: dispose stops a spawn whose launch marker comes late', () => {
  // The stop escalates HUP → TERM → KILL; each signal reaches the process group from the side
  // shell only once the marker has named the pid. Before, a marker that came after the KILL step
  // was not used: the stop closed the channel at its deadline, and a program that ignores the
  // hang-up ran on — the spawn said `processMayExist`, the disposal left it running.
  it('the KILL reaches the process group once the marker arrives, before the deadline', async () => {
    const tag = `${process.pid}-late-marker`
    let provider: SshProvider | undefined
    let disposing: Promise<void> | undefined
    const markerDelayMs = 3 * SSH_SIGNAL_REQUEST_VERIFY_MS
    provider = createSshProvider(sshOptions(sshd(), undefined, { loadSsh2: loadSsh2WithLateMarker(() => (disposing = provider?.dispose()), markerDelayMs) }))
    try {
      const error = await provider.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP TERM; exec sleep 300"], env: { PTYKIT_DISPOSE_TAG: tag } }).then(
        () => undefined,
        (rejection: unknown) => rejection,
      )
      expect(disposing).toBeDefined()
      await disposing
      expect(error).toMatchObject({ code: 'provider_disposed', processMayExist: false })
      expect(taggedProcesses(tag)).toEqual([])
    } finally {
      for (const pid of taggedProcesses(tag)) process.kill(pid, 'SIGKILL')
      await provider.dispose()
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

describe('SSH: dispose closes its connections before it resolves', () => {
  // Once `await provider.dispose()` returns, the server has seen every session end: a host that
  // exits, or a test that looks at the remote, right after must not race the connection's close.
  it('no TCP connection of the provider is left open when dispose() resolves', async () => {
    const tcpSockets = (): number => process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length
    const before = tcpSockets()
    const provider = createSshProvider(sshOptions(sshd()))
    const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
    expect(provider.hasPty(id)).toBe(true)
    expect(tcpSockets()).toBeGreaterThan(before)
    await provider.dispose()
    expect(tcpSockets()).toBe(before)
  })
})
