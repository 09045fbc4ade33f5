// The web terminal's server over real sockets, without a browser: what a client that does not
// behave like the page can do to it (a request target that is no URL, frames after a protocol
// violation), a tab's × clicked twice, and what the pages are told when the server shuts down.
// Real PTYs, through ptykit's controller and the node-pty provider.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { connect as connectTcp, type Socket } from 'node:net'
import { beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { expectNoChildLeftBehind, isDead, liveChildrenOf, waitFor } from '../../test/node-pty/pty-test-support.js'
import { SERVER_SHUTDOWN_CLOSE_CODE } from './page-connection.js'
import { PROTOCOL_VIOLATION_CLOSE_CODE, type ClientMessage, type ServerMessage } from './protocol.js'
import { startWebTerminalServer, WEBSOCKET_PATH, type WebTerminalServer } from './server.js'

/** How long a shell may take to answer (a shared 2-core machine). */
const ANSWER_TIMEOUT_MS = 10_000

const servers: WebTerminalServer[] = []
const clients: { close(): void }[] = []

expectNoChildLeftBehind(async () => {
  for (const client of clients) client.close()
  await Promise.all(servers.map((server) => server.close()))
})

async function startServer(): Promise<WebTerminalServer> {
  const server = await startWebTerminalServer({ shell: '/bin/sh', env: { PS1: '$ ' }, log: () => undefined })
  servers.push(server)
  return server
}

/** A page as the `ws` client plays it: every message it was sent, in order. */
class PageClient {
  readonly messages: ServerMessage[] = []
  /** The close code, once the socket closed. */
  readonly closed: Promise<number>

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(String(data)) as ServerMessage))
    this.closed = new Promise((resolve) => socket.on('close', (code) => resolve(code)))
    clients.push({ close: () => socket.terminate() })
  }

  static async connect(server: WebTerminalServer): Promise<PageClient> {
    const socket = new WebSocket(`${server.origin.replace('http', 'ws')}${WEBSOCKET_PATH}?token=${server.token}`, { origin: server.origin })
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    return new PageClient(socket)
  }

  send(message: ClientMessage): void {
    this.socket.send(JSON.stringify(message))
  }

  /** The first message (from index `from` on) that `predicate` accepts, once one came. */
  next(predicate: (message: ServerMessage) => boolean, what: string, from = 0): Promise<ServerMessage> {
    return waitFor(() => this.messages.slice(from).find(predicate), what, ANSWER_TIMEOUT_MS)
  }

  /** Open a terminal (the shell, or `command`) and answer its id once it is shown here. */
  async open(command?: string): Promise<string> {
    const from = this.messages.length
    this.send(command === undefined ? { type: 'open', cols: 80, rows: 24 } : { type: 'open', cols: 80, rows: 24, command })
    const attached = await this.next((message) => message.type === 'attached' && message.opened, 'the new terminal', from)
    return attached.type === 'attached' ? attached.id : ''
  }

  /** What this page was shown of terminal `id` since message `from`: snapshots and output, joined. */
  screenOf(id: string, from = 0): string {
    return this.messages
      .slice(from)
      .map((message) => (message.type === 'attached' && message.id === id ? message.snapshot : message.type === 'output' && message.id === id ? message.data : ''))
      .join('')
  }

  /** Wait until terminal `id` printed a match of `pattern` (since message `from`); answers it. */
  async waitForText(id: string, pattern: RegExp, from = 0): Promise<RegExpMatchArray> {
    return waitFor(() => this.screenOf(id, from).match(pattern) ?? undefined, `${pattern} from ${id}`, ANSWER_TIMEOUT_MS)
  }
}

/** A TCP connection to the server that sends exactly the bytes the test writes. */
class RawConnection {
  received = Buffer.alloc(0)
  readonly ended: Promise<void>

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => (this.received = Buffer.concat([this.received, chunk])))
    socket.on('error', () => undefined) // a reset is an end, as far as these tests go
    this.ended = new Promise((resolve) => socket.on('close', () => resolve()))
    clients.push({ close: () => socket.destroy() })
  }

  static async connect(server: WebTerminalServer): Promise<RawConnection> {
    const socket = connectTcp(Number(new URL(server.origin).port), '127.0.0.1')
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    return new RawConnection(socket)
  }

  /** The status line of the server's answer, once its head came (or `''` if it closed without one). */
  async statusLine(): Promise<string> {
    const headCame = (): true | undefined => (this.received.includes('\r\n\r\n') ? true : undefined)
    await Promise.race([waitFor(headCame, 'the answer', ANSWER_TIMEOUT_MS), this.ended])
    return headCame() === true ? (String(this.received).split('\r\n')[0] ?? '') : ''
  }
}

/** `GET <target>` as a raw request, plain or asking for a WebSocket upgrade. */
function rawGet(server: WebTerminalServer, target: string, { upgrade = false, query = '' } = {}): string {
  const host = new URL(server.origin).host
  const upgradeHeaders = upgrade
    ? `Upgrade: websocket\r\nConnection: Upgrade\r\nOrigin: ${server.origin}\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n`
    : ''
  return `GET ${target}${query} HTTP/1.1\r\nHost: ${host}\r\n${upgradeHeaders}\r\n`
}

/** One WebSocket frame as a client sends it (masked): text, or a close with `code`. */
function clientFrame(payload: { text: string } | { closeCode: number }): Buffer {
  const data = 'text' in payload ? Buffer.from(payload.text) : Buffer.from([payload.closeCode >> 8, payload.closeCode & 0xff])
  const opcode = 'text' in payload ? 0x1 : 0x8
  const length = data.length < 126 ? Buffer.from([0x80 | data.length]) : Buffer.from([0x80 | 126, data.length >> 8, data.length & 0xff])
  const mask = randomBytes(4)
  const masked = Buffer.from(data.map((byte, at) => byte ^ (mask[at % 4] ?? 0)))
  return Buffer.concat([Buffer.from([0x80 | opcode]), length, mask, masked])
}

/** The frames the server sent (unmasked), from `bytes` after the upgrade's answer. */
function serverFrames(bytes: Buffer): { opcode: number; payload: Buffer }[] {
  const frames: { opcode: number; payload: Buffer }[] = []
  let at = bytes.indexOf('\r\n\r\n') + 4
  while (at + 2 <= bytes.length) {
    let length = (bytes[at + 1] ?? 0) & 0x7f
    let start = at + 2
    if (length === 126) {
      length = bytes.readUInt16BE(at + 2)
      start += 2
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(at + 2))
      start += 8
    }
    if (start + length > bytes.length) break
    frames.push({ opcode: (bytes[at] ?? 0) & 0x0f, payload: bytes.subarray(start, start + length) })
    at = start + length
  }
  return frames
}

/** Live children of this process (the PTYs the server in this process started) running `commandLine`. */
function childrenRunning(commandLine: string): number[] {
  return liveChildrenOf(process.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(commandLine)
    } catch {
      return false
    }
  })
}

describe('the web terminal server', () => {
  let server: WebTerminalServer
  beforeAll(async () => {
    server = await startServer()
  }, 60_000)

  it('answers 400 to a request target that is no URL, plain or as an upgrade, and keeps serving its page', async () => {
    for (const upgrade of [false, true]) {
      const raw = await RawConnection.connect(server)
      // An absolute-form target with a bad host: `new URL` throws on it. No token is needed.
      raw.socket.write(rawGet(server, 'http://[/ws', { upgrade }))
      expect(await raw.statusLine()).toMatch(/^HTTP\/1\.1 400 /)
      raw.socket.destroy()
    }
    const page = await PageClient.connect(server)
    page.send({ type: 'attach' })
    const id = await page.open()
    page.send({ type: 'input', id, data: 'echo "still-$((6 * 7))"\r', kind: 'driving' })
    await page.waitForText(id, /still-42/)
  })

  it('carries out nothing a page sent after a protocol violation, not even frames in the same packet', async () => {
    const page = await PageClient.connect(server)
    page.send({ type: 'attach' })
    const shell = await page.open()

    // The offending page attaches (it now shows the shell), then sends, in ONE write: a violation,
    // keys for the shell, and a request to open a terminal.
    const offender = await RawConnection.connect(server)
    offender.socket.write(rawGet(server, WEBSOCKET_PATH, { upgrade: true, query: `?token=${server.token}` }))
    expect(await offender.statusLine()).toMatch(/^HTTP\/1\.1 101 /)
    offender.socket.write(clientFrame({ text: JSON.stringify({ type: 'attach' }) }))
    await waitFor(
      () => (serverFrames(offender.received).some((frame) => frame.opcode === 0x1 && String(frame.payload).includes(shell)) ? true : undefined),
      'the shell shown on the offending page',
    )
    const attachedIds = (): Set<string> => new Set(page.messages.flatMap((message) => (message.type === 'attached' ? [message.id] : [])))
    const shownBefore = attachedIds() // the shell, and the terminals earlier tests left on this server
    offender.socket.write(
      Buffer.concat([
        clientFrame({ text: JSON.stringify({ type: 'input', id: shell, data: 'x', kind: 'launch' }) }),
        clientFrame({ text: JSON.stringify({ type: 'input', id: shell, data: 'echo "pwned-$((6 * 7))"\r', kind: 'driving' }) }),
        clientFrame({ text: JSON.stringify({ type: 'open', cols: 80, rows: 24, command: 'sleep 4747' }) }),
      ]),
    )
    const close = await waitFor(() => serverFrames(offender.received).find((frame) => frame.opcode === 0x8), 'the close frame')
    expect(close.payload.readUInt16BE(0)).toBe(PROTOCOL_VIOLATION_CLOSE_CODE)
    // The offender answers the close. `ws` handles a socket's frames in order and ends the socket
    // once it read that answer: every frame above was handled (or ignored) by then.
    offender.socket.write(clientFrame({ closeCode: 1000 }))
    await offender.ended

    // The good page opens a terminal and takes every terminal back: any terminal the offender's
    // `open` started (its spawn was asked for before this one) is shown to it by then.
    const own = await page.open()
    const from = page.messages.length
    page.send({ type: 'attach' })
    await page.next((message) => message.type === 'attached' && message.id === own, 'the re-attach', from)
    await page.next((message) => message.type === 'attached' && message.id === shell, 'the re-attach', from)
    expect([...attachedIds()].sort()).toEqual([...shownBefore, own].sort())
    expect(childrenRunning('sleep 4747')).toEqual([])

    // The shell reads its keys in order: had it been sent the offender's, it would print them first.
    page.send({ type: 'input', id: shell, data: 'echo "after-$((6 * 7))"\r', kind: 'driving' })
    await page.waitForText(shell, /after-42/, from)
    expect(page.screenOf(shell)).not.toContain('pwned-42')
  })

  it('answers a second close of a terminal being stopped with the same verified verdict, once the process is gone', async () => {
    const page = await PageClient.connect(server)
    const id = await page.open(`trap '' HUP TERM; sleep 4646 & echo "PIDS:$$:$!"; wait`)
    const [, shellPid, jobPid] = (await page.waitForText(id, /PIDS:(\d+):(\d+)/)).map(Number)
    expect(isDead(shellPid as number)).toBe(false)
    expect(isDead(jobPid as number)).toBe(false)

    // What each `closed` said, and whether the processes were gone when it came.
    const answers: { verified: boolean; shellGone: boolean; jobGone: boolean }[] = []
    page.socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as ServerMessage
      if (message.type !== 'closed' || message.id !== id) return
      answers.push({ verified: message.verified, shellGone: isDead(shellPid as number), jobGone: isDead(jobPid as number) })
    })
    page.send({ type: 'close', id }) // the tab's × clicked twice: the hang-up is ignored, so the stop
    page.send({ type: 'close', id }) // takes the grace period and a kill
    await waitFor(() => (answers.length === 2 ? true : undefined), 'both answers', 20_000)
    expect(answers).toEqual([
      { verified: true, shellGone: true, jobGone: true },
      { verified: true, shellGone: true, jobGone: true },
    ])

    // Once the stop is over the terminal is unknown: a close now is answered `false` at once.
    page.send({ type: 'close', id })
    await waitFor(() => (page.messages.filter((message) => message.type === 'closed' && message.id === id).length === 3 ? true : undefined), 'the third answer')
    expect(page.messages.filter((message) => message.type === 'closed').at(-1)).toEqual({ type: 'closed', id, verified: false })
  }, 30_000)
})

describe('the web terminal server shutting down', () => {
  it('tells each page every terminal it showed is closed, with the verdict, then closes its socket with 1001; a page that stopped reading does not hold it', async () => {
    const server = await startServer()
    const page = await PageClient.connect(server)
    page.send({ type: 'attach' })
    const id = await page.open()
    page.send({ type: 'input', id, data: 'echo "PID:$$"\r', kind: 'driving' })
    const shellPid = Number((await page.waitForText(id, /PID:(\d+)/))[1])
    const idle = await PageClient.connect(server) // a second page, showing nothing

    // A page that stopped reading: upgraded, then never reads again, nor answers a close.
    const stalled = await RawConnection.connect(server)
    stalled.socket.write(rawGet(server, WEBSOCKET_PATH, { upgrade: true, query: `?token=${server.token}` }))
    expect(await stalled.statusLine()).toMatch(/^HTTP\/1\.1 101 /)
    stalled.socket.pause()

    // What the page had been told, and whether the shell was gone, when its socket closed.
    const atClose = page.closed.then((code) => ({ code, closed: page.messages.filter((message) => message.type === 'closed'), shellGone: isDead(shellPid) }))
    await server.close()
    expect(await atClose).toEqual({ code: SERVER_SHUTDOWN_CLOSE_CODE, closed: [{ type: 'closed', id, verified: true }], shellGone: true })
    expect(await idle.closed).toBe(SERVER_SHUTDOWN_CLOSE_CODE)
    expect(idle.messages).toEqual([])
    stalled.socket.resume()
    await stalled.ended // dropped by the server, since it never answered the close
  }, 30_000)
})
