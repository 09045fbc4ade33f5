// One page's connection over a stand-in WebSocket (its readyState, bufferedAmount and close are the
// test's), the real terminal registry and sessions, and the real controller over the fake provider:
// what the server sends a page, and what it holds for it, when the page leaves at an awkward time.
import { EventEmitter } from 'node:events'
import { createPtyController } from 'ptykit/controller'
import { createFakePtyProvider, createManualClock } from 'ptykit/testing'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { WebSocket } from 'ws'
import { PageConnection, SOCKET_BACKLOG_LIMIT_BYTES, SOCKET_DRAINED_BYTES } from './page-connection.js'
import type { ClientMessage, ServerMessage } from './protocol.js'
import { createTerminalRegistry, type TerminalRegistry } from './terminal-registry.js'
import type { TerminalSession } from './terminal-session.js'

/** The parts of a `ws` WebSocket a page connection uses, played by the test. */
class StandInSocket extends EventEmitter {
  readonly CONNECTING = 0
  readonly OPEN = 1
  readonly CLOSING = 2
  readonly CLOSED = 3
  readyState = 1
  /** Bytes queued and not yet written out: set by the test. */
  bufferedAmount = 0
  /** Every message sent while the socket was open. */
  sent: ServerMessage[] = []
  /** Sends attempted once it was no longer open (`ws` drops them; none should be attempted). */
  sendsAfterClose = 0
  /** Callbacks of sends not yet written out (run by {@link StandInSocket.drain}). */
  unwritten: ((error?: Error) => void)[] = []

  send(data: string, callback?: (error?: Error) => void): void {
    if (this.readyState !== this.OPEN) {
      this.sendsAfterClose += 1
      return
    }
    this.sent.push(JSON.parse(data) as ServerMessage)
    if (callback !== undefined) this.unwritten.push(callback)
  }

  close(): void {
    this.leave()
  }

  terminate(): void {
    this.leave()
  }

  /** The page sends `message`. */
  receive(message: ClientMessage): void {
    this.emit('message', Buffer.from(JSON.stringify(message)), false)
  }

  /** The page goes away: the socket closes, as `ws` reports it. */
  leave(): void {
    if (this.readyState === this.CLOSED) return
    this.readyState = this.CLOSED
    this.emit('close', 1001, Buffer.alloc(0))
  }

  /** The page read everything: the buffer empties and every pending send's callback runs. */
  drain(): void {
    this.bufferedAmount = 0
    for (const callback of this.unwritten.splice(0)) callback()
  }

  /** The page acknowledges `chars` of terminal `id`'s output, as drawn since the last `attached` it got for it. */
  ack(id: string, chars: number): void {
    this.receive({ type: 'ack', id, chars, generation: this.generationOf(id) })
  }

  /** The `generation` of the last `attached` sent about terminal `id` (0: none was). */
  generationOf(id: string): number {
    const attached = this.sent.filter((message) => message.type === 'attached' && message.id === id).at(-1)
    return attached?.type === 'attached' ? attached.generation : 0
  }

  /** The messages sent about terminal `id`, by type. */
  typesFor(id: string): string[] {
    return this.sent.filter((message) => 'id' in message && message.id === id).map((message) => message.type)
  }
}

type Harness = {
  provider: ReturnType<typeof createFakePtyProvider>
  controller: ReturnType<typeof createPtyController>
  registry: TerminalRegistry
  log: string[]
  /** A new page: its socket and connection. */
  connect(): { socket: StandInSocket; connection: PageConnection }
  /** The controller's count of a terminal's unacknowledged output chars. */
  unacknowledged(id: string): number
}

let cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

function harness(controllerOptions: Omit<Parameters<typeof createPtyController>[0], 'provider'> = {}): Harness {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider, ...controllerOptions })
  const registry = createTerminalRegistry(controller, { shell: '/bin/sh' })
  const log: string[] = []
  cleanups.push(async () => {
    registry.dispose()
    await controller.dispose()
    await provider.dispose()
  })
  return {
    provider,
    controller,
    registry,
    log,
    connect() {
      const socket = new StandInSocket()
      const connection = new PageConnection(socket as unknown as WebSocket, registry, (line) => log.push(line))
      return { socket, connection }
    },
    unacknowledged: (id) => controller.getFlowControlState(id)?.unacknowledgedChars ?? -1,
  }
}

/** Wait (5 s at most) until `condition` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** The only terminal the registry holds, once it holds one. */
async function onlySession(registry: TerminalRegistry): Promise<TerminalSession> {
  await until(() => registry.sessions.size === 1, 'the terminal to be opened')
  return [...registry.sessions.values()][0] as TerminalSession
}

describe('a page that leaves while its open request is in flight', () => {
  it('gets nothing attached: the terminal keeps running detached, acknowledged by the server, for the next page', async () => {
    const { provider, registry, connect, unacknowledged } = harness()
    const { socket } = connect()
    provider.scriptNextSpawn({ hang: true })
    socket.receive({ type: 'open', cols: 80, rows: 24 })
    await until(() => provider.pendingSpawnCount() === 1, 'the spawn to start')

    socket.leave() // the page leaves before the spawn answers
    provider.releaseSpawn()
    const session = await onlySession(registry)
    provider.emitData(session.id, 'printed after the page left\r\n')
    await session.settled()

    // Detached, as every terminal of a page that leaves: nobody owes its output, so the process is
    // never held back for a page that is gone, and it keeps running.
    expect(unacknowledged(session.id)).toBe(0)
    expect(session.isLive).toBe(true)
    expect(socket.sent).toEqual([])
    expect(socket.sendsAfterClose).toBe(0)

    // The next page gets it, with what it printed meanwhile.
    const next = connect().socket
    next.receive({ type: 'attach' })
    await session.settled()
    const attached = next.sent.find((message) => message.type === 'attached')
    expect(attached).toMatchObject({ id: session.id, opened: false })
    expect(attached?.type === 'attached' && attached.snapshot).toContain('printed after the page left')
    provider.emitData(session.id, 'seen by the next page\r\n')
    await session.settled()
    expect(next.sent.at(-1)).toEqual({ type: 'output', id: session.id, data: 'seen by the next page\r\n' })
    expect(unacknowledged(session.id)).toBe('seen by the next page\r\n'.length) // owed by the next page only
  })

  it('and reloads gets the terminal on its reloaded page, as a new tab, even when that page attached before the spawn answered', async () => {
    const { provider, registry, connect, unacknowledged } = harness()
    const { socket } = connect()
    socket.receive({ type: 'attach' })
    provider.scriptNextSpawn({ hang: true })
    socket.receive({ type: 'open', cols: 80, rows: 24 })
    await until(() => provider.pendingSpawnCount() === 1, 'the spawn to start')

    socket.leave() // the page reloads: its socket closes…
    const reloaded = connect().socket
    reloaded.receive({ type: 'attach' }) // …and the new page attaches while the spawn is still in flight
    provider.releaseSpawn()
    const session = await onlySession(registry)
    await session.settled()
    expect(reloaded.typesFor(session.id)).toEqual(['attached'])
    expect(reloaded.sent.at(-1)).toMatchObject({ type: 'attached', id: session.id, opened: true, status: { state: 'live' } })
    expect(socket.sent).toEqual([])
    expect(socket.sendsAfterClose).toBe(0)

    // The reloaded page owns it: its output reaches that page and is owed by it, its keys reach the process.
    provider.emitData(session.id, 'hello\r\n')
    await session.settled()
    expect(reloaded.sent.at(-1)).toEqual({ type: 'output', id: session.id, data: 'hello\r\n' })
    expect(unacknowledged(session.id)).toBe('hello\r\n'.length)
    reloaded.receive({ type: 'input', id: session.id, data: 'echo hi\r', kind: 'driving' })
    expect(provider.getPty(session.id)?.written).toBe('echo hi\r')
    reloaded.ack(session.id, 'hello\r\n'.length)
    expect(unacknowledged(session.id)).toBe(0)
  })

  it('has it shown on the connected page that attached last, never on one that left since', async () => {
    const { provider, registry, connect } = harness()
    const asker = connect().socket
    const older = connect().socket
    const newer = connect().socket
    provider.scriptNextSpawn({ hang: true })
    asker.receive({ type: 'open', cols: 80, rows: 24 })
    await until(() => provider.pendingSpawnCount() === 1, 'the spawn to start')
    older.receive({ type: 'attach' })
    newer.receive({ type: 'attach' })
    asker.leave()
    newer.leave() // the page that attached last leaves too: the one before it is still there
    provider.releaseSpawn()
    const session = await onlySession(registry)
    await session.settled()
    expect(older.typesFor(session.id)).toEqual(['attached'])
    expect(newer.sent).toEqual([])
    expect(newer.sendsAfterClose).toBe(0)
    expect(asker.sendsAfterClose).toBe(0)
  })

  it('whose spawn then fails is sent no error, and nothing is opened', async () => {
    const { provider, registry, connect } = harness()
    const { socket } = connect()
    provider.scriptNextSpawn({ hang: true })
    socket.receive({ type: 'open', cols: 80, rows: 24 })
    await until(() => provider.pendingSpawnCount() === 1, 'the spawn to start')
    socket.leave()
    provider.failSpawn(undefined, new Error('no such shell'))
    await until(() => provider.pendingSpawnCount() === 0, 'the spawn to fail')
    await provider.settle()
    expect(registry.sessions.size).toBe(0)
    expect(socket.sent).toEqual([])
    expect(socket.sendsAfterClose).toBe(0)
  })
})

describe('a page whose open request is in flight', () => {
  it('gets its terminal while it is connected, even when another page attached meanwhile', async () => {
    const { provider, registry, connect } = harness()
    const asker = connect().socket
    provider.scriptNextSpawn({ hang: true })
    asker.receive({ type: 'open', cols: 80, rows: 24 })
    await until(() => provider.pendingSpawnCount() === 1, 'the spawn to start')
    const other = connect().socket
    other.receive({ type: 'attach' })
    provider.releaseSpawn()
    const session = await onlySession(registry)
    await session.settled()
    expect(asker.sent).toMatchObject([{ type: 'attached', id: session.id, opened: true }])
    expect(other.typesFor(session.id)).toEqual([])
  })
})

describe('a spawn that answers after the server closed', () => {
  it('is stopped and never kept: no terminal (so no mirror) outlives the close, and the open is refused', async () => {
    const { provider, registry, connect } = harness()
    const { socket } = connect()
    const open = vi.spyOn(registry, 'open')
    provider.scriptNextSpawn({ hang: true })
    socket.receive({ type: 'open', cols: 80, rows: 24 })
    await until(() => provider.pendingSpawnCount() === 1, 'the spawn to start')
    const [id] = provider.livePtyIds()
    expect(id).toBeDefined()

    socket.leave()
    registry.dispose() // the server closes (before it disposes the controller: see server.ts)
    provider.releaseSpawn()
    await expect(open.mock.results[0]?.value).rejects.toThrow(/closed/)
    expect(registry.sessions.size).toBe(0)
    await until(() => provider.getPty(id ?? '')?.live === false, 'the late PTY to be stopped')
    expect(socket.sendsAfterClose).toBe(0)
  })

  it('in the turns between the spawn being published and its handle handed over is stopped and never kept too', async () => {
    const { provider, controller, registry, connect } = harness()
    const { socket } = connect()
    const open = vi.spyOn(registry, 'open')
    provider.scriptNextSpawn({ hang: true })
    socket.receive({ type: 'open', cols: 80, rows: 24 })
    await until(() => provider.pendingSpawnCount() === 1, 'the spawn to start')
    // The server's close lands once the controller published the PTY, before the registry hears
    // of it: the registry's terminals are disposed, then the controller (which stops what it owns).
    let controllerDisposed: Promise<void> | undefined
    controller.on('spawn', () => {
      socket.leave()
      registry.dispose()
      controllerDisposed = controller.dispose()
    })
    provider.releaseSpawn()
    await expect(open.mock.results[0]?.value).rejects.toThrow(/closed/)
    expect(registry.sessions.size).toBe(0)
    await controllerDisposed
    expect(provider.livePtyIds()).toEqual([])
  })
})

/** A harness with one terminal open and shown on a first page (its snapshot sent). */
async function withShownTerminal(
  controllerOptions: Parameters<typeof harness>[0] = {},
): Promise<Harness & { socket: StandInSocket; session: TerminalSession }> {
  const h = harness(controllerOptions)
  const { socket } = h.connect()
  socket.receive({ type: 'open', cols: 80, rows: 24 })
  const session = await onlySession(h.registry)
  await session.settled()
  expect(socket.typesFor(session.id)).toEqual(['attached'])
  return { ...h, socket, session }
}

describe('what a page is sent once it no longer shows a terminal', () => {
  it('a page another page took the terminal from gets one `detached`, then nothing: no output, no exit; its acks, keys and resizes are ignored', async () => {
    const { provider, connect, socket, session, unacknowledged } = await withShownTerminal()
    provider.emitData(session.id, 'before\r\n')
    await session.settled()
    const other = connect().socket
    other.receive({ type: 'attach' })
    await session.settled()
    expect(socket.typesFor(session.id)).toEqual(['attached', 'output', 'detached'])
    expect(other.typesFor(session.id)).toEqual(['attached'])

    provider.emitData(session.id, 'after\r\n')
    await session.settled()
    const owedByOther = unacknowledged(session.id)
    expect(owedByOther).toBe('after\r\n'.length)
    socket.ack(session.id, 1_000)
    socket.receive({ type: 'input', id: session.id, data: 'from the old page\r', kind: 'driving' })
    socket.receive({ type: 'resize', id: session.id, cols: 100, rows: 30 })
    expect(unacknowledged(session.id)).toBe(owedByOther) // the old page cannot pay the new page's debt
    expect(provider.getPty(session.id)?.written).toBe('')
    expect(provider.getPty(session.id)).toMatchObject({ cols: 80, rows: 24 })

    provider.emitExit(session.id, { exitCode: 0 })
    await until(() => other.typesFor(session.id).includes('exit'), 'the exit to reach the page showing it')
    await session.settled()
    expect(socket.typesFor(session.id)).toEqual(['attached', 'output', 'detached'])
    expect(other.typesFor(session.id)).toEqual(['attached', 'output', 'exit'])
  })

  it('a page whose socket closed is sent nothing, not even `detached`, and owes nothing: output and the exit are acknowledged by the server', async () => {
    const { provider, socket, session, unacknowledged, log } = await withShownTerminal()
    provider.emitData(session.id, 'drawn?\r\n') // sent, never acknowledged by the page
    await session.settled()
    provider.emitData(session.id, 'coalesced when the page left\r\n') // its frame not sent yet
    socket.leave()
    await session.settled()
    expect(unacknowledged(session.id)).toBe(0)

    provider.emitData(session.id, 'x'.repeat(50_000))
    await session.settled()
    expect(unacknowledged(session.id)).toBe(0)
    provider.emitExit(session.id, { exitCode: 3 })
    await session.settled()
    await provider.settle()
    expect(socket.typesFor(session.id)).toEqual(['attached', 'output'])
    expect(socket.sendsAfterClose).toBe(0)
    expect(log).toEqual([])
  })

  it('a page that leaves while its snapshot is being taken is sent no snapshot and holds nothing', async () => {
    const { provider, connect, socket, session, unacknowledged } = await withShownTerminal()
    const next = connect().socket
    next.receive({ type: 'attach' }) // its snapshot waits for the mirror
    provider.emitData(session.id, 'held for the snapshot\r\n')
    next.leave()
    await session.settled()
    expect(next.sent).toEqual([])
    expect(next.sendsAfterClose).toBe(0)
    expect(unacknowledged(session.id)).toBe(0)
    expect(socket.typesFor(session.id)).toEqual(['attached', 'detached'])
  })

  it('a page detached before it was sent the terminal is told nothing about it', async () => {
    const { connect, session } = await withShownTerminal()
    const first = connect().socket
    const second = connect().socket
    first.receive({ type: 'attach' }) // its snapshot waits for the mirror…
    second.receive({ type: 'attach' }) // …when the second page takes the terminal
    await session.settled()
    expect(first.typesFor(session.id)).toEqual([])
    expect(second.typesFor(session.id)).toEqual(['attached'])
  })

  it('a page showing a terminal that another page closes is sent `closed` once the stop is verified, as the closing page is', async () => {
    const { provider, registry, connect, socket, session } = await withShownTerminal()
    const other = connect().socket
    other.receive({ type: 'attach' }) // the other window takes the terminal…
    await session.settled()
    expect(other.typesFor(session.id)).toEqual(['attached'])
    socket.receive({ type: 'close', id: session.id }) // …and the first one closes it (its close raced the take-over)
    await until(() => socket.typesFor(session.id).includes('closed'), 'the closing page to be answered')
    await new Promise((resolve) => setImmediate(resolve))
    expect(registry.sessions.size).toBe(0)
    expect(provider.getPty(session.id)?.live).toBe(false)
    expect(socket.sent.at(-1)).toEqual({ type: 'closed', id: session.id, verified: true })
    expect(other.typesFor(session.id)).toEqual(['attached', 'closed'])
    expect(other.sent.at(-1)).toEqual({ type: 'closed', id: session.id, verified: true })
  })

  it('a page closing the terminal it shows is sent one `closed`; a page it was taken from is sent none', async () => {
    const { connect, socket, session } = await withShownTerminal()
    const other = connect().socket
    other.receive({ type: 'attach' })
    await session.settled()
    other.receive({ type: 'close', id: session.id })
    await until(() => other.typesFor(session.id).includes('closed'), 'the closing page to be answered')
    await new Promise((resolve) => setImmediate(resolve))
    expect(other.typesFor(session.id)).toEqual(['attached', 'closed'])
    expect(socket.typesFor(session.id)).toEqual(['attached', 'detached'])
  })

  it('a page that asked to close a terminal and left before the stop was verified is sent nothing', async () => {
    const { registry, socket, session } = await withShownTerminal()
    const close = vi.spyOn(registry, 'close')
    socket.receive({ type: 'close', id: session.id })
    socket.leave()
    expect(await close.mock.results[0]?.value).toBe(true) // the stop in flight was verified…
    await new Promise((resolve) => setImmediate(resolve)) // …and its answer handled
    expect(registry.sessions.size).toBe(0)
    expect(socket.typesFor(session.id)).toEqual(['attached'])
    expect(socket.sendsAfterClose).toBe(0)
  })
})

/** Output as node-pty delivers a flood: `total` chars in 4 KB reads, numbered lines. */
function emitFlood(provider: Harness['provider'], id: string, total: number, tag: string): string {
  let text = ''
  for (let line = 0; text.length < total; line += 1) text += `${tag}-${String(line).padStart(7, '0')}\r\n`
  for (let at = 0; at < text.length; at += 4096) provider.emitData(id, text.slice(at, at + 4096))
  return text
}

/** The output the page was sent for `id` (after its last `attached`), joined. */
function outputSince(socket: StandInSocket, id: string, from = 0): string {
  return socket.sent
    .slice(from)
    .map((message) => (message.type === 'output' && message.id === id ? message.data : ''))
    .join('')
}

/** Bytes of frames sent from index `from` on. */
function bytesSince(socket: StandInSocket, from: number): number {
  return socket.sent.slice(from).reduce((sum, message) => sum + JSON.stringify(message).length, 0)
}

describe("output to a page is bounded by its socket's buffer", () => {
  it('a page whose socket is backed up is sent no output and the process is paused, until the socket drains; then it gets every char, in order', async () => {
    const { provider, socket, session, unacknowledged } = await withShownTerminal()
    provider.emitData(session.id, 'hello\r\n')
    await session.settled()
    socket.ack(session.id, 7) // the page takes part in flow control
    const before = socket.sent.length

    socket.bufferedAmount = SOCKET_BACKLOG_LIMIT_BYTES + 1 // the page stopped reading
    const flood = emitFlood(provider, session.id, 150_000, 'held')
    await session.settled()
    expect(socket.sent.length).toBe(before) // nothing more is queued on the backed-up socket
    expect(provider.getPty(session.id)?.paused).toBe(true) // held unacknowledged: the process stopped
    expect(unacknowledged(session.id)).toBeGreaterThan(100_000)

    expect(socket.unwritten.length).toBeGreaterThan(1)
    socket.bufferedAmount = SOCKET_DRAINED_BYTES + 1 // one send written out, more pending: not drained yet
    socket.unwritten.shift()?.()
    await session.settled()
    expect(socket.sent.length).toBe(before)

    socket.drain()
    await session.settled()
    expect(outputSince(socket, session.id, before)).toBe(flood.slice(0, outputSince(socket, session.id, before).length))
    socket.ack(session.id, outputSince(socket, session.id, before).length)
    await until(() => provider.getPty(session.id)?.paused === false, 'the process to resume')
    await session.settled()
    socket.drain()
    await session.settled()
    expect(outputSince(socket, session.id, before)).toBe(flood)
  })

  it("after the controller's cap lets the process run again, a page still backed up has at most one frame held for it; once drained it is repainted from the mirror", async () => {
    // The controller's timers on a manual clock: the cap (the longest a pause is held) fires when the test says.
    const clock = createManualClock()
    const maxHoldMs = 1_000
    const { provider, socket, session, unacknowledged } = await withShownTerminal({ clock, flowControl: { pauseMaxHoldMs: maxHoldMs } })
    provider.emitData(session.id, 'hello\r\n')
    await session.settled()
    socket.ack(session.id, 7)
    const before = socket.sent.length
    socket.bufferedAmount = SOCKET_BACKLOG_LIMIT_BYTES + 1

    emitFlood(provider, session.id, 150_000, 'first')
    await session.settled()
    expect(provider.getPty(session.id)?.paused).toBe(true)
    clock.advance(maxHoldMs)
    expect(provider.getPty(session.id)?.paused).toBe(false) // the cap forgave the page and resumed the process
    // The page never acknowledges and its socket stays full: 2 MB more reach the server.
    const flood = emitFlood(provider, session.id, 2_000_000, 'second')
    await session.settled()
    await session.settled()
    expect(bytesSince(socket, before)).toBe(0) // the socket's buffer did not grow
    // Nothing is held for the page: the dropped output was acknowledged once the mirror parsed it.
    expect(unacknowledged(session.id)).toBe(0)
    expect(provider.getPty(session.id)?.paused).toBe(false)

    socket.drain()
    await session.settled()
    expect(socket.typesFor(session.id).slice(-1)).toEqual(['attached'])
    const repaint = socket.sent.at(-1)
    const lastLine = flood.trimEnd().split('\r\n').at(-1) ?? ''
    expect(repaint).toMatchObject({ type: 'attached', id: session.id, opened: false, status: { state: 'live' } })
    expect(repaint?.type === 'attached' && repaint.snapshot).toContain(lastLine)

    // From the repaint on, output flows again, owed by the page as usual.
    provider.emitData(session.id, 'after the repaint\r\n')
    await session.settled()
    expect(socket.sent.at(-1)).toEqual({ type: 'output', id: session.id, data: 'after the repaint\r\n' })
    expect(unacknowledged(session.id)).toBe('after the repaint\r\n'.length)
    // A late ack of output the page drew before the repaint (the repaint forgave it) pays nothing
    // of what was sent after it: acks name the `attached` they follow.
    socket.receive({ type: 'ack', id: session.id, chars: 1_000, generation: socket.generationOf(session.id) - 1 })
    expect(unacknowledged(session.id)).toBe('after the repaint\r\n'.length)
    socket.ack(session.id, 'after the repaint\r\n'.length)
    expect(unacknowledged(session.id)).toBe(0)
  })

  it("a late ack that arrives while the repaint's snapshot is being taken pays nothing of the output held for it", async () => {
    const clock = createManualClock()
    const maxHoldMs = 1_000
    const { provider, socket, session, unacknowledged } = await withShownTerminal({ clock, flowControl: { pauseMaxHoldMs: maxHoldMs } })
    socket.bufferedAmount = SOCKET_BACKLOG_LIMIT_BYTES + 1
    emitFlood(provider, session.id, 150_000, 'first')
    await session.settled()
    clock.advance(maxHoldMs)
    emitFlood(provider, session.id, 600_000, 'second') // past the held frame: dropped, a repaint is due
    await session.settled()
    socket.drain() // the repaint's snapshot is being taken (the mirror's callback has not run yet)…
    provider.emitData(session.id, 'during the repaint\r\n') // …output comes, held for it…
    // …and an ack of output the page drew before (the repaint forgave it) arrives, naming the
    // `attached` the page still shows.
    socket.ack(session.id, 1_000)
    await session.settled()
    expect(socket.typesFor(session.id).slice(-2)).toEqual(['attached', 'output'])
    expect(socket.sent.at(-1)).toEqual({ type: 'output', id: session.id, data: 'during the repaint\r\n' })
    expect(unacknowledged(session.id)).toBe('during the repaint\r\n'.length)
  })

  it('a page being repainted when another window takes the terminal is told it was detached', async () => {
    const clock = createManualClock()
    const maxHoldMs = 1_000
    const { provider, connect, socket, session } = await withShownTerminal({ clock, flowControl: { pauseMaxHoldMs: maxHoldMs } })
    socket.bufferedAmount = SOCKET_BACKLOG_LIMIT_BYTES + 1
    emitFlood(provider, session.id, 150_000, 'first')
    await session.settled()
    clock.advance(maxHoldMs)
    emitFlood(provider, session.id, 600_000, 'second') // past the held frame: dropped, a repaint is due
    await session.settled()
    const before = socket.sent.length
    socket.drain() // the repaint's snapshot is being taken (the mirror's callback has not run yet)…
    const other = connect().socket
    other.receive({ type: 'attach' }) // …when another window takes the terminal
    await session.settled()
    expect(socket.sent.slice(before).map((message) => message.type)).toEqual(['detached'])
    expect(other.typesFor(session.id)).toEqual(['attached'])
  })

  it('an exit while output is held goes out after that output, once the socket drained', async () => {
    const { provider, socket, session } = await withShownTerminal()
    const before = socket.sent.length
    socket.bufferedAmount = SOCKET_BACKLOG_LIMIT_BYTES + 1
    provider.emitData(session.id, 'last words\r\n')
    provider.emitExit(session.id, { exitCode: 2 })
    await session.settled()
    await provider.settle()
    expect(socket.sent.length).toBe(before)
    socket.drain()
    await session.settled()
    expect(socket.typesFor(session.id).slice(1)).toEqual(['output', 'exit'])
    expect(outputSince(socket, session.id, before)).toBe('last words\r\n')
  })

  it('a page that leaves or is detached while output is held for it is sent nothing more, and nothing waits for its drain', async () => {
    const { provider, connect, socket, session, unacknowledged } = await withShownTerminal()
    socket.bufferedAmount = SOCKET_BACKLOG_LIMIT_BYTES + 1
    const before = socket.sent.length
    provider.emitData(session.id, 'held\r\n')
    await session.settled()
    const other = connect().socket
    other.receive({ type: 'attach' })
    await session.settled()
    expect(unacknowledged(session.id)).toBe(0) // what was held for the old page is acknowledged
    socket.drain() // the old page's socket drains after all: nothing is sent on it for this terminal
    await session.settled()
    expect(socket.typesFor(session.id).slice(-1)).toEqual(['detached'])
    expect(outputSince(socket, session.id, before)).toBe('')

    other.bufferedAmount = SOCKET_BACKLOG_LIMIT_BYTES + 1
    provider.emitData(session.id, 'held for the other page\r\n')
    await session.settled()
    other.leave()
    other.drain()
    await session.settled()
    expect(other.sendsAfterClose).toBe(0)
    expect(unacknowledged(session.id)).toBe(0)
    provider.emitData(session.id, 'nobody watches\r\n')
    await session.settled()
    expect(unacknowledged(session.id)).toBe(0)
  })
})

describe("a page's raw bytes (xterm.js's onBinary)", () => {
  it('are written to the PTY as bytes, one per character, in order with its keys; a page it was taken from writes none', async () => {
    const { provider, connect, socket, session } = await withShownTerminal()
    // A left click at column 100, row 3 in the default X10 mouse encoding: ESC [ M, then 32 + button, column and row.
    const report = '\x1b[M\x20\x84\x23'
    socket.receive({ type: 'input', id: session.id, data: 'é', kind: 'driving' })
    socket.receive({ type: 'binary', id: session.id, data: report })
    socket.receive({ type: 'binary', id: session.id, data: '\x00\xff' })
    expect([...provider.getPty(session.id)!.writtenBytes]).toEqual([0xc3, 0xa9, 0x1b, 0x5b, 0x4d, 0x20, 0x84, 0x23, 0x00, 0xff])
    expect(provider.getPty(session.id)!.writes.map((write) => write.bytes === undefined)).toEqual([true, false, false])

    const other = connect().socket
    other.receive({ type: 'attach' })
    await session.settled()
    socket.receive({ type: 'binary', id: session.id, data: '\x80' })
    expect(provider.getPty(session.id)!.writtenBytes).toHaveLength(10)
  })

  it('with a character past U+00FF (no byte) close that socket (1008), nothing written; the terminal keeps running', async () => {
    const { provider, socket, session, log } = await withShownTerminal()
    let closedWith: unknown
    socket.close = ((code: number) => {
      closedWith = code
      socket.leave()
    }) as typeof socket.close
    socket.emit('message', Buffer.from(JSON.stringify({ type: 'binary', id: session.id, data: '\x1b[M\u20ac' })), false)
    expect(closedWith).toBe(1008)
    expect(log.at(-1)).toMatch(/binary\.data must be a string of characters U\+0000 to U\+00FF/)
    expect(provider.getPty(session.id)!.writes).toEqual([])
    expect(session.isLive).toBe(true)
  })
})

describe("the exit a page is sent: what ended and why, in the shell's words", () => {
  it.each([
    [{ exitCode: 3 }, 'exited', '/bin/sh exited with code 3'],
    [{ exitCode: 0, signal: 9 }, 'signaled', '/bin/sh killed by signal 9'],
    [{ exitCode: 1, hostReportsChildExitStatus: false }, 'unknown', '/bin/sh ended (cause unknown: this host cannot report why)'],
  ])('%o: %s, "%s" — no agent named', async (exit, kind, description) => {
    const { provider, socket, session } = await withShownTerminal()
    provider.emitExit(session.id, exit)
    await until(() => socket.typesFor(session.id).includes('exit'), 'the exit')
    const sent = socket.sent.find((message) => message.type === 'exit' && message.id === session.id)
    expect(sent).toEqual({ type: 'exit', id: session.id, status: { state: 'ended', kind, description } })
  })
})
