/**
 * Calls about a PTY whose contact the app lost — a brief drop (the host alive), a host that died
 * (none answers), a host that took a dead one's place — and calls a drop or a dispose cut off.
 * Each answers what is true, typed, naming the method and the PTY:
 *
 * - `clearBuffer` acts on the host, which keeps the session's screen. After a brief drop it
 *   connects first, as a stop does (the reconnect re-attaches the PTY), and the clear goes out;
 *   with no host to reach it rejects `host_unavailable`, as that stop does; a clear the drop cut
 *   off rejects `transport_lost`; a dead host's PTY (a successor connected, holding no screen of
 *   it) is refused, nothing sent. Until 8 Dec each resolved with nothing cleared ("cleared",
 *   while the host still held the screen).
 * - A stop, or an attach, with no host to reach rejects `host_unavailable` naming the method and
 *   carrying `ptyId`, as a refusal for a dispose or a detach does. Until 8 Dec it had no `ptyId`
 *   ("No pty host answers on …"): an app stopping 100 PTYs could not tell whose refusal it was.
 * - `probeLiveness` of a dead predecessor's PTY, cut off by `dispose()`, is refused
 *   `provider_disposed` as the probe of any other PTY is. Until 8 Dec it answered `null`.
 */
import { createPtyHostProvider, isPtyHostError, type PtyHostProvider } from 'ptykit/pty-host'
import type { Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { answerAttach, fakeHostClosedAfter, okReplyFrame, useCleanups, type FakeAttachRequest } from './pty-host-test-support.js'

const cleanups = useCleanups()
const unhandled = recordUnhandledRejections()

const METHODS = ['spawn', 'attach', 'write', 'resize', 'pause', 'resume', 'ack', 'shutdown', 'list', 'probe', 'cwd', 'foreground', 'children', 'clear', 'snapshot', 'exits', 'forgetExits']

/** A request a scripted host got: its method, PTY, the connection it came on (1 for the first hello) and the socket to answer on. */
type Seen = { method: string; ptyId: string | undefined; connection: number; id: unknown; socket: Socket }

/**
 * A fake host whose `n`th connection welcomes as host instance `instanceOf(n)` (with
 * `predecessorJournal` as given), and hands each request to `answer` (every request is recorded in
 * `seen`); `answer` returning `false` leaves the request unanswered.
 */
async function scriptedHost(options: { instanceOf?: (connection: number) => string; predecessorJournal?: boolean; answer: (request: Seen, message: Record<string, unknown>) => boolean }) {
  const seen: Seen[] = []
  const numbers = new WeakMap<Socket, number>()
  let hellos = 0
  const host = await fakeHostClosedAfter(
    cleanups,
    (message, socket) => {
      if (message.type !== 'request') return
      const request: Seen = { method: String(message.method), ptyId: (message.params as { ptyId?: string }).ptyId, connection: numbers.get(socket) ?? 0, id: message.id, socket }
      seen.push(request)
      if (options.answer(request, message) !== false) return
    },
    {
      onHello: (_message, socket) => {
        numbers.set(socket, ++hellos)
        const welcome: Record<string, unknown> = { v: PTY_HOST_PROTOCOL_VERSION, type: 'welcome', hostInstanceId: options.instanceOf?.(hellos) ?? 'fake-host', hostPid: process.pid, methods: METHODS, probeFencesIncarnation: true }
        if (options.predecessorJournal === true) welcome.predecessorJournal = true
        socket.write(encodeFrame(welcome))
      },
    },
  )
  return { ...host, seen }
}

/** Answer `request` as a host holding every PTY live (attach), answering every other request `null`. */
function answerAll(request: Seen, message: Record<string, unknown>): boolean {
  if (request.method === 'attach') answerAttach(request.socket, message as FakeAttachRequest, '')
  else request.socket.write(okReplyFrame(request.id, request.method === 'list' ? [] : null))
  return true
}

/** An app on `socketPath` holding `term-1` (attached), never starting a host. */
async function appHoldingTerm1(socketPath: string): Promise<PtyHostProvider> {
  const app = createPtyHostProvider({ socketPath, autoStart: false, requestTimeoutMs: 30_000 })
  cleanups.push(() => app.dispose())
  await app.attach('term-1')
  return app
}

/** Drop every connection the host has (the host itself stays), and wait until the app saw it. */
async function dropConnections(app: PtyHostProvider, seen: readonly Seen[]): Promise<void> {
  for (const { socket } of seen) socket.destroy()
  await waitFor(() => (app.connected ? undefined : true), 'the app to see its connection dropped')
}

/** A call's outcome as data: its value, or its refusal's code, the method its message names and its PTY. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await run() }
  } catch (error) {
    if (!isPtyHostError(error)) return { untyped: String(error) }
    return { code: error.code, method: /`(\w+)`/.exec(error.message)?.[1], ptyId: error.ptyId }
  }
}

const clearsOf = (seen: readonly Seen[], ptyId: string): Seen[] => seen.filter((request) => request.method === 'clear' && request.ptyId === ptyId)

describe('clearBuffer of a PTY whose contact was lost', () => {
  it('after a brief drop: connects first (the PTY re-attached), and the clear reaches the host', async () => {
    const host = await scriptedHost({ answer: answerAll })
    const app = await appHoldingTerm1(host.socketPath)
    await dropConnections(app, host.seen)
    expect(app.hasPty('term-1')).toBe(null)
    // Before: resolved at once, nothing sent — the host kept the screen.
    expect(await outcome(() => app.clearBuffer('term-1'))).toEqual({ value: undefined })
    expect(clearsOf(host.seen, 'term-1').map((request) => request.connection)).toEqual([2])
    expect(app.hasPty('term-1')).toBe(true)
    expect(unhandled).toEqual([])
  }, 30_000)

  it('with no host to reach: rejects host_unavailable naming clearBuffer and the PTY, as a stop does', async () => {
    const host = await scriptedHost({ answer: answerAll })
    const app = await appHoldingTerm1(host.socketPath)
    await host.close()
    await waitFor(() => (app.connected ? undefined : true), 'the app to see its host gone')
    const cleared = await outcome(() => app.clearBuffer('term-1'))
    const stopped = await outcome(() => app.shutdown('term-1'))
    expect(cleared).toEqual({ code: 'host_unavailable', method: 'clearBuffer', ptyId: 'term-1' })
    expect(stopped).toEqual({ code: 'host_unavailable', method: 'shutdown', ptyId: 'term-1' })
    expect(unhandled).toEqual([])
  }, 30_000)

  it('cut off by a drop (sent, not answered): rejects transport_lost naming clearBuffer and the PTY', async () => {
    const host = await scriptedHost({ answer: (request, message) => (request.method === 'clear' && request.connection === 1 ? false : answerAll(request, message)) })
    const app = await appHoldingTerm1(host.socketPath)
    const clearing = outcome(() => app.clearBuffer('term-1'))
    await waitFor(() => (clearsOf(host.seen, 'term-1').length === 1 ? true : undefined), 'the clear to reach the host')
    await dropConnections(app, host.seen)
    // Before: resolved — "cleared", the host's answer never heard.
    expect(await clearing).toEqual({ code: 'transport_lost', method: 'clearBuffer', ptyId: 'term-1' })
    expect(unhandled).toEqual([])
  }, 30_000)

  it('of a dead host, a successor connected: refused host_unavailable naming the PTY, nothing sent (no screen of it is there)', async () => {
    const host = await scriptedHost({
      instanceOf: (connection) => `host-${connection}`,
      predecessorJournal: true,
      // The successor runs the dead host's process still (its probe answers `true`).
      answer: (request, message) => {
        if (request.method === 'probe') request.socket.write(okReplyFrame(request.id, true))
        else answerAll(request, message)
        return true
      },
    })
    const app = await appHoldingTerm1(host.socketPath)
    await dropConnections(app, host.seen)
    await waitFor(() => (app.connected ? true : undefined), 'the app to reach the successor')
    expect(await app.probeLiveness('term-1')).toBe(true)
    expect(await outcome(() => app.clearBuffer('term-1'))).toEqual({ code: 'host_unavailable', method: 'clearBuffer', ptyId: 'term-1' })
    expect(clearsOf(host.seen, 'term-1')).toEqual([])
    expect(unhandled).toEqual([])
  }, 30_000)
})

describe('an attach with no host to reach', () => {
  it('rejects host_unavailable naming attach and the PTY', async () => {
    const host = await scriptedHost({ answer: answerAll })
    const app = await appHoldingTerm1(host.socketPath)
    await host.close()
    await waitFor(() => (app.connected ? undefined : true), 'the app to see its host gone')
    expect(await outcome(() => app.attach('term-2'))).toEqual({ code: 'host_unavailable', method: 'attach', ptyId: 'term-2' })
    expect(unhandled).toEqual([])
  }, 30_000)
})

describe('probeLiveness of a dead predecessor’s PTY', () => {
  it('cut off by dispose(): refused provider_disposed naming probeLiveness and the PTY, as the probe of a PTY of the connected host is', async () => {
    let probes = 0
    const host = await scriptedHost({
      instanceOf: (connection) => `host-${connection}`,
      predecessorJournal: true,
      // The successor's probes: the reconnect's and the dispose's answered (alive), the caller's (the second) left unanswered.
      answer: (request, message) => {
        if (request.method !== 'probe') return answerAll(request, message)
        if (++probes === 2) return false
        request.socket.write(okReplyFrame(request.id, true))
        return true
      },
    })
    const app = await appHoldingTerm1(host.socketPath)
    await dropConnections(app, host.seen)
    await waitFor(() => (probes === 1 ? true : undefined), 'the successor to be asked about the dead host’s PTY')
    const probing = outcome(() => app.probeLiveness('term-1'))
    await waitFor(() => (probes === 2 ? true : undefined), 'the caller’s probe to reach the successor')
    await app.dispose()
    // Before: `null`, where a probe of the connected host's PTY cut off so rejects.
    expect(await probing).toEqual({ code: 'provider_disposed', method: 'probeLiveness', ptyId: 'term-1' })
    expect(unhandled).toEqual([])
  }, 30_000)

  it('that the successor does not answer in time: null, "unsure" (the connected host never held it)', async () => {
    let probes = 0
    const host = await scriptedHost({
      instanceOf: (connection) => `host-${connection}`,
      predecessorJournal: true,
      answer: (request, message) => {
        if (request.method !== 'probe') return answerAll(request, message)
        if (++probes === 2) return false
        request.socket.write(okReplyFrame(request.id, true))
        return true
      },
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 300 })
    cleanups.push(() => app.dispose())
    await app.attach('term-1')
    await dropConnections(app, host.seen)
    await waitFor(() => (probes === 1 ? true : undefined), 'the successor to be asked about the dead host’s PTY')
    expect(await outcome(() => app.probeLiveness('term-1'))).toEqual({ value: null })
    expect(unhandled).toEqual([])
  }, 30_000)
})
