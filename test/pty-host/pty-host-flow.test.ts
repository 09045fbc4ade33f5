import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { createPtyController, type PtyFlowControlOptions, type PtyTerminal } from 'ptykit/controller'
import { isPtyHostError, PTY_HOST_PROTOCOL_VERSION, startPtyHost, type PtyHostServerOptions } from 'ptykit/pty-host'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_ACK_HIGH_WATERMARK_CHARS } from '../../src/pty-host/session-flow.js'
import { describe, expect, it } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { fakeHost, HOST_FROM_SOURCES, inProcessHost as startInProcessHost, killHostAndClean, makeSocketDir, providerOn, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A pty host in this process for one test (see the support's `inProcessHost`). */
const inProcessHost = (options: PtyHostServerOptions = {}) => startInProcessHost(cleanups, options)

/** Resolve once `read()` has not changed across `polls` polls `everyMs` apart. */
async function settled(read: () => number, polls = 4, everyMs = 150): Promise<number> {
  let last = read()
  let stable = 0
  while (stable < polls) {
    await new Promise((resolve) => setTimeout(resolve, everyMs))
    const now = read()
    stable = now === last ? stable + 1 : 0
    last = now
  }
  return last
}

describe('pty host: flow control by acknowledged chars', () => {
  it('a pause from a client not subscribed to the session does nothing (it could never be dropped with that client)', async () => {
    const { socketPath } = await inProcessHost()
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const { id } = await app.spawn({ file: '/bin/sh' })
    let output = ''
    app.onData((event) => {
      if (event.id === id) output += event.data
    })
    const stranger = await rawClient(socketPath)
    expect(await stranger.request('pause', { ptyId: id })).toMatchObject({ ok: true })
    stranger.close()
    await app.write(id, 'echo still-$((20 + 22))\r')
    await waitFor(() => (output.includes('still-42') ? true : undefined), 'output after a stranger paused the session')
  })

  it('pauses the remote process while the app does not acknowledge, resumes on acks, and loses nothing (acks, not the screen, hold the producer)', async () => {
    // A screen far behind (a 1 char/s budget, a small ring) must neither stall nor release the producer.
    const { socketPath } = await inProcessHost({ historyChars: 16_384, screenCharsPerSecond: 1 })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    // Several times the host's acknowledgement window, so the stall shows.
    const lines = 300_000
    let received = ''
    let acking = true
    let ackedAt = -1
    app.onData(({ id, data }) => {
      received += data
      if (ackedAt < 0) {
        // The first ack opts in: from here on the host counts what it sends and waits for acks.
        ackedAt = received.length
        app.acknowledgeData(id, 1)
      } else if (acking) app.acknowledgeData(id, data.length)
    })
    const exited = new Promise<void>((resolve) => app.onExit(() => resolve()))
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', `seq -f line-%g 0 ${lines - 1}; echo END`] })
    await waitFor(() => (ackedAt >= 0 ? true : undefined), 'the first output')
    acking = false
    // A slow app: nothing acknowledged. The host pauses the PTY, so the process blocks on its tty.
    const stalledAt = await settled(() => received.length)
    expect(received).not.toContain('END')
    // Bounded by the high watermark past the opt-in (plus what was read before the pause landed).
    expect(stalledAt).toBeLessThan(ackedAt + PTY_HOST_ACK_HIGH_WATERMARK_CHARS + 256 * 1024)
    expect(await app.probeLiveness(id)).toBe(true)

    // The app catches up: everything received is acknowledged, and every later chunk too.
    acking = true
    app.acknowledgeData(id, received.length)
    await exited
    const printed = received.split('\r\n').filter((line) => line.length > 0)
    expect(printed.at(-1)).toBe('END')
    expect(printed.slice(0, -1)).toEqual(Array.from({ length: lines }, (_, index) => `line-${index}`))
  }, 60_000)
})

describe('pty host: output that ends inside a character', () => {
  it('delivers the unfinished last character (as U+FFFD) before the exit, as the whole stream decoded at once gives it', async () => {
    const { socketPath } = await inProcessHost()
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    // The first two of the euro sign's three bytes; the first three of a four-byte emoji.
    for (const [octal, bytes] of [
      ['\\342\\202', [0xe2, 0x82]],
      ['\\360\\237\\230', [0xf0, 0x9f, 0x98]],
    ] as const) {
      const events: string[] = []
      let output = ''
      const offData = app.onData((event) => {
        output += event.data
        events.push('data')
      })
      const exited = new Promise<void>((resolve) => {
        const offExit = app.onExit(() => {
          events.push('exit')
          offExit()
          resolve()
        })
      })
      await app.spawn({ file: '/bin/sh', args: ['-c', `printf 'ab${octal}'`] })
      await exited
      offData()
      expect(output).toBe(Buffer.concat([Buffer.from('ab'), Buffer.from(bytes)]).toString('utf8'))
      expect(output.endsWith('\uFFFD')).toBe(true)
      expect(events.at(-1)).toBe('exit')
      expect(events.filter((e) => e === 'exit')).toHaveLength(1)
    }
  })
})

describe('pty host: a connection that drops in the middle of a spawn', () => {
  it('stops the session whose spawn reply never reached a client: nothing is left unowned', async () => {
    const { dir, socketPath } = await inProcessHost()
    const pidFile = join(dir, 'spawned.pid')
    const secret = readFileSync(`${socketPath}.secret`, 'utf8').trim()
    const sessionId = 'dropped-mid-spawn'
    // A client that asks for a spawn and is gone before the reply can arrive.
    await new Promise<void>((resolve) => {
      const socket = createConnection(socketPath, () => {
        socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'hello', secret }))
        socket.write(
          encodeFrame({
            v: PTY_HOST_PROTOCOL_VERSION,
            type: 'request',
            id: 1,
            method: 'spawn',
            params: { sessionId, file: '/bin/sh', args: ['-c', `echo $$ > '${pidFile}'; exec sleep 600`] },
          }),
          () => {
            socket.destroy()
            resolve()
          },
        )
      })
      socket.on('error', () => resolve())
    })
    // The process did start (the host records its exit), and is stopped by the host. Why not wait
    // for its pid file: the host may stop it before its shell got to write it (seen under load).
    const next = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => next.detach())
    const exit = await waitFor(async () => (await next.listExits()).find((event) => event.id === sessionId), 'the unowned session to be stopped', 10_000)
    // Stopped by the host (SIGHUP, or a later step of its stop), not ended on its own.
    expect(exit.cause?.kind).toBe('signaled')
    expect(exit.diedBeforeStopRequest).not.toBe(true)
    const written = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() : ''
    if (written !== '') expect(isDead(Number(written))).toBe(true)
    expect((await next.listProcesses()).some((row) => row.id === sessionId)).toBe(false)
  }, 30_000)
})

describe('pty host provider: a spawn whose reply was lost with the connection', () => {
  it('stops that session on the host as soon as it reconnects (the caller was told the spawn failed)', async () => {
    // A scripted host: the first connection takes the spawn and drops before replying; the
    // provider must come back and stop the session it minted.
    const requests: { connection: number; method: unknown; params: Record<string, unknown> }[] = []
    // Connections numbered in the order of their first request (each one here sends at least one).
    let connections = 0
    const connectionOf = new WeakMap<object, number>()
    const host = await fakeHost((message, socket) => {
      let connection = connectionOf.get(socket)
      if (connection === undefined) connectionOf.set(socket, (connection = ++connections))
      requests.push({ connection, method: message.method, params: message.params as Record<string, unknown> })
      if (message.method === 'spawn') socket.destroy()
      else socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: true, result: null }))
    })
    cleanups.push(() => host.close())
    const { socketPath } = host
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.detach())

    await expect(app.spawn({ sessionId: 'lost-reply', isNewSession: true, file: '/bin/sh' })).rejects.toMatchObject({ code: 'transport_lost' })
    const stop = await waitFor(() => requests.find((request) => request.method === 'shutdown'), 'the provider to stop the orphan after reconnecting', 10_000)
    expect(stop).toMatchObject({ connection: 2, params: { ptyId: 'lost-reply', immediate: true } })
    // Not re-attached, not kept: the caller never learned of this session.
    expect(requests.some((request) => request.method === 'attach')).toBe(false)
    expect(app.hasPty('lost-reply')).toBeNull()
  }, 30_000)
})

describe('pty host under the controller: a consumer that stops taking part', () => {
  // DESIGN §4: flow control only slows a producer for a consumer that takes part in it. The host
  // counts acknowledged chars on its own once the app acknowledged; when the controller stops
  // acknowledging on a consumer's behalf (its last output() iterator left, or a pause was held for
  // the maximum time and forgiven), the host must stop holding the process too, or it pauses it
  // after its window (1 Mi chars) and nothing ever resumes it. Found by a review (3 Dec).
  const lines = 400_000 // ~4.6 MB: several times the host's acknowledgement window
  const flood = ['-c', `seq -f line-%g 0 ${lines - 1}; echo END`]

  async function runToExit(
    consume: (terminal: PtyTerminal, firstOutput: Promise<void>) => Promise<void>,
    flowControl: PtyFlowControlOptions = {},
    hostOptions: PtyHostServerOptions = {},
  ) {
    const { socketPath } = await inProcessHost(hostOptions)
    const app = providerOn(socketPath, { autoStart: false })
    const controller = createPtyController({ provider: app, flowControl })
    cleanups.push(() => controller.dispose())
    let received = 0
    let sawOutput!: () => void
    const firstOutput = new Promise<void>((resolve) => (sawOutput = resolve))
    controller.on('data', (event) => {
      received += event.data.length
      sawOutput()
    })
    const terminal = await controller.spawnTerminal({ file: '/bin/sh', args: flood })
    await consume(terminal, firstOutput)
    const exit = await Promise.race([terminal.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))])
    expect(exit, `the process ran to its end (received ${received} chars)`).toMatchObject({ cause: { kind: 'exited', exitCode: 0 } })
  }

  it('runs the process to its end after its only output() iterator broke out', async () => {
    await runToExit(async (terminal) => {
      let chunks = 0
      for await (const _ of terminal.output()) if (++chunks === 3) break
    })
  }, 30_000)

  it('runs the process to its end past an output() iterator opened and never read (forgiven once, then overrun)', async () => {
    let forgotten: AsyncIterableIterator<string> | undefined
    await runToExit(
      async (terminal) => {
        forgotten = terminal.output({ maxQueuedChars: 200_000 })
      },
      { pauseMaxHoldMs: 300 },
    )
    // Ended at its bound, not holding the whole flood: its next pull says so.
    await expect(forgotten?.next()).rejects.toMatchObject({ code: 'output_overrun' })
  }, 30_000)

  /** A consumer that acknowledges once — a positive ack, so the host starts counting too — and never again. */
  async function acknowledgeOnceThenStop(terminal: PtyTerminal, firstOutput: Promise<void>): Promise<void> {
    await firstOutput
    terminal.acknowledgeData(1)
  }

  it('runs the process to its end after a consumer that acknowledged once stopped (one forgiven hold, then unthrottled)', async () => {
    await runToExit(acknowledgeOnceThenStop, { pauseMaxHoldMs: 300 })
  }, 30_000)

  // DESIGN §4: a pause is never held forever. With the controller's flow control off, acks are
  // forwarded as given and only the host's own count pauses the PTY; the host's longest hold
  // (PTY_HOST_ACK_MAX_HOLD_MS, shortened here) then ends it, as the controller's cap would.
  it('with flow control turned off, the host holds its own pause at most ackMaxHoldMs: the process runs to its end though its consumer acknowledged once and stopped', async () => {
    await runToExit(acknowledgeOnceThenStop, { enabled: false }, { ackMaxHoldMs: 300 })
  }, 30_000)
})

describe('pty host: the ackMaxHoldMs option', () => {
  it.each([0, 1.5, -1, '300'])('refuses %j with invalid_option naming the option and the value, taking no lock', async (value) => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const refused = await startPtyHost({ socketPath, ackMaxHoldMs: value as number }).catch((error: unknown) => error)
    expect(isPtyHostError(refused) && refused.code).toBe('invalid_option')
    expect((refused as Error).message).toContain('ackMaxHoldMs')
    expect((refused as Error).message).toContain(String(value))
    // Nothing held: a host with a valid setting starts on the same socket.
    const host = await startPtyHost({ socketPath, ackMaxHoldMs: 300 })
    await host.close()
  })

  it('is the --ack-max-hold-ms flag of the host command; a bad value fails the start naming it', () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const run = (value: string) => spawnSync(HOST_FROM_SOURCES.file, [...HOST_FROM_SOURCES.args, '--socket', socketPath, '--ack-max-hold-ms', value], { encoding: 'utf8', timeout: 20_000 })
    const zero = run('0')
    expect(zero.status).toBe(1)
    expect(zero.stderr).toContain('ackMaxHoldMs')
    const text = run('soon')
    expect(text.status).toBe(2)
    expect(text.stderr).toContain('--ack-max-hold-ms')
  })
})

