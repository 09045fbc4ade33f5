import { type Socket } from 'node:net'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { encodeFrame, encodeJsonFrames, encodeJsonFramesInto, encodeOutputFrame, FrameDecoder } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'
import { isRequestTimeout, PtyHostConnection } from '../../src/pty-host/pty-host-connection.js'
import { ptyHostPaths } from '../../src/pty-host/socket-security.js'
import { isPtyHostError, PtyHostError } from '../../src/pty-host/pty-host-error.js'
import { fakeHost, inProcessHost, okReplyFrame, useCleanups } from './pty-host-test-support.js'

/** Several messages as consecutive JSON frames in one buffer, as a connection sends them. */
const encodeFrames = (messages: readonly unknown[]): Buffer => encodeJsonFrames(messages.map((message) => JSON.stringify(message)))

describe('frame decoder over a reused read buffer', () => {
  it('decodes every message exactly when each read lands in one buffer that the next read overwrites', () => {
    const message = fc.oneof(
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.record({ ptyId: fc.string({ minLength: 1, maxLength: 20 }), data: fc.string({ unit: 'grapheme', maxLength: 120 }), seq: fc.nat({ max: 1e9 }) }),
    )
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), fc.array(fc.integer({ min: 1, max: 48 }), { minLength: 1, maxLength: 20 }), (messages, cuts) => {
        const encode = (m: Record<string, unknown>): Buffer =>
          typeof m.seq === 'number' && typeof m.data === 'string' && typeof m.ptyId === 'string' && Object.keys(m).length === 3
            ? encodeOutputFrame(m.ptyId, m.seq, m.data, undefined)
            : encodeFrame(m)
        const expected = messages.map((m) => (Object.keys(m).length === 3 && typeof m.seq === 'number' && typeof m.data === 'string' ? { type: 'data', ...m } : JSON.parse(JSON.stringify(m))))
        const bytes = Buffer.concat(messages.map(encode))
        const readBuffer = Buffer.alloc(64)
        const decoder = new FrameDecoder()
        const decoded: unknown[] = []
        let offset = 0
        for (let i = 0; offset < bytes.length; i++) {
          const length = Math.min(cuts[i % cuts.length]!, bytes.length - offset)
          bytes.copy(readBuffer, 0, offset, offset + length)
          decoded.push(...decoder.push(readBuffer.subarray(0, length)))
          readBuffer.fill(0xee) // the next read overwrites what the decoder was handed
          offset += length
        }
        expect(decoded).toEqual(expected)
      }),
    )
  })

  it('encodes several messages as the same frames one by one would be', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { maxLength: 6 }), (messages) => {
        expect(encodeFrames(messages)).toEqual(Buffer.concat(messages.map((m) => encodeFrame(m))))
      }),
    )
  })

  it('encodes into given memory the same frames, using it exactly when they surely fit', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()), { minLength: 1, maxLength: 6 }), fc.nat({ max: 2_000 }), (messages, size) => {
        const memory = Buffer.alloc(size, 0xee)
        const frames = encodeJsonFramesInto(messages.map((message) => JSON.stringify(message)), memory)
        expect(frames).toEqual(encodeFrames(messages))
        const bound = messages.reduce((sum: number, m) => sum + 4 + 3 * JSON.stringify(m).length, 0)
        expect(frames.buffer === memory.buffer).toBe(bound <= size)
      }),
    )
  })
})


describe('pty host connection (app side)', () => {
  let host: Awaited<ReturnType<typeof fakeHost>> | null = null
  afterEach(async () => {
    await host?.close()
    host = null
  })

  it('settles every request whose reply arrived before the connection dropped, and fails only the unanswered one', async () => {
    const ANSWERED = 20
    const asked: Record<string, unknown>[] = []
    host = await fakeHost((message, socket) => {
      if (message.type !== 'request') return
      asked.push(message)
      if (asked.length < ANSWERED + 1) return
      // The replies and the end of the connection in one write (each reply is handed on one
      // macrotask after the previous one, so the close is seen before the last ones): all count.
      socket.end(Buffer.concat(asked.slice(1).map((request) => okReplyFrame(request.id, request.params))))
    })
    const connection = await PtyHostConnection.open(ptyHostPaths(host.socketPath), 5_000)
    let closed = false
    connection.listen(() => undefined, () => (closed = true))
    const unanswered = connection.request('cwd', { ptyId: 'never' }).then(
      () => 'resolved',
      (error: Error & { code?: string }) => error.code,
    )
    const answered = Array.from({ length: ANSWERED }, (_, i) => connection.request('probe', { ptyId: `p${i}` }))
    await expect(Promise.all(answered)).resolves.toEqual(Array.from({ length: ANSWERED }, (_, i) => ({ ptyId: `p${i}` })))
    await expect(unanswered).resolves.toBe('transport_lost')
    await expect.poll(() => closed).toBe(true)
  })

  it('sends the requests and notifications of one turn in order, and none after a close', async () => {
    const received: unknown[] = []
    host = await fakeHost((message, socket) => {
      received.push([message.type, message.method])
      if (message.type === 'request') socket.write(okReplyFrame(message.id, null))
    })
    const connection = await PtyHostConnection.open(ptyHostPaths(host.socketPath), 5_000)
    connection.listen(() => undefined, () => undefined)
    const first = connection.request('list', {})
    connection.notify('ack', { ptyId: 'a', chars: 1 })
    const second = connection.request('probe', { ptyId: 'a' })
    await Promise.all([first, second])
    expect(received).toEqual([
      ['request', 'list'],
      ['notify', 'ack'],
      ['request', 'probe'],
    ])
    // Queued in the turn of the close: written before the close (as a message written at once
    // would have been), and the request fails as lost — its reply can never arrive.
    const lost = connection.request('list', {}).catch((error: Error & { code?: string }) => error.code)
    connection.close()
    await expect(lost).resolves.toBe('transport_lost')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(received).toEqual([
      ['request', 'list'],
      ['notify', 'ack'],
      ['request', 'probe'],
      ['request', 'list'],
    ])
  })

  it('fails a request the host does not answer within its timeout, with the method and the timeout named, and only that one', async () => {
    host = await fakeHost((message, socket) => {
      if (message.type === 'request' && message.method === 'probe') socket.write(okReplyFrame(message.id, true))
    })
    const connection = await PtyHostConnection.open(ptyHostPaths(host.socketPath), 5_000)
    connection.listen(() => undefined, () => undefined)
    const unanswered = connection.request('cwd', { ptyId: 'p' }, 50).then(
      () => null,
      (error: unknown) => error,
    )
    const untimed = connection.request('list', {}).then(
      () => 'answered',
      () => 'failed',
    )
    // Answered requests with the same timeout, before and after the unanswered one's deadline.
    await expect(connection.request('probe', { ptyId: 'p' }, 50)).resolves.toBe(true)
    const error = await unanswered
    expect(error).toMatchObject({ name: 'PtyHostError', code: 'transport_lost', message: 'The pty host did not answer cwd within 50 ms' })
    expect(isRequestTimeout(error)).toBe(true)
    await expect(connection.request('probe', { ptyId: 'p' }, 50)).resolves.toBe(true)
    // A request without a timeout waits for its reply or the close, never a deadline.
    connection.close()
    await expect(untimed).resolves.toBe('failed')
  })

  it("never overwrites a turn's frames the socket still holds, while the host reads nothing", async () => {
    const TURNS = 200
    const received: unknown[] = []
    let hostSocket: Socket | null = null
    host = await fakeHost((message, socket) => {
      hostSocket = socket
      received.push((message.params as { text: string }).text)
    })
    const connection = await PtyHostConnection.open(ptyHostPaths(host.socketPath), 5_000)
    connection.listen(() => undefined, () => undefined)
    connection.notify('ack', { ptyId: 'p', text: 'first' })
    await expect.poll(() => hostSocket).not.toBeNull()
    hostSocket!.pause()
    received.length = 0
    // Each turn's frame (~4 KB: surely within the connection's 16 KiB write buffer) goes out while
    // the host reads nothing: the kernel's socket buffer fills, and the socket keeps later turns'
    // frames until it can write them.
    const texts = Array.from({ length: TURNS }, (_, i) => `${i}:`.padEnd(4_000, String.fromCharCode(97 + (i % 26))))
    for (const text of texts) {
      connection.notify('ack', { ptyId: 'p', text })
      await new Promise((resolve) => setImmediate(resolve))
    }
    hostSocket!.resume()
    await expect.poll(() => received.length, { timeout: 5_000 }).toBe(TURNS)
    expect(received).toEqual(texts)
    connection.close()
  })

  it('hands an event on only after the reply before it was handed to its caller', async () => {
    host = await fakeHost((message, socket) => {
      if (message.type !== 'request') return
      socket.write(
        encodeFrames([
          { v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: true, result: { pid: 1 } },
          { v: PTY_HOST_PROTOCOL_VERSION, type: 'exit', ptyId: 'p', code: 0 },
        ]),
      )
    })
    const connection = await PtyHostConnection.open(ptyHostPaths(host.socketPath), 5_000)
    const order: string[] = []
    let exited!: () => void
    const exit = new Promise<void>((resolve) => (exited = resolve))
    connection.listen(
      (event) => {
        order.push(String(event.type))
        exited()
      },
      () => undefined,
    )
    await connection.request('spawn', { sessionId: 'p' }).then(() => order.push('reply'))
    await exit
    expect(order).toEqual(['reply', 'exit'])
    connection.close()
  })

  it('hands every reply to its own caller and every event on in order, before later events, however the host splits and paces its bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }),
        async (script, cuts, pauses) => {
          // `script`: true = the next request's reply, false = an event; the replies go out in request order.
          const requestCount = script.filter(Boolean).length
          const asked: Record<string, unknown>[] = []
          const fake = await fakeHost((message, socket) => {
            if (message.type !== 'request') return
            asked.push(message)
            if (asked.length < requestCount) return
            let replied = 0
            let events = 0
            const bytes = encodeFrames(
              script.map((isReply) =>
                isReply
                  ? { v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: asked[replied]!.id, ok: true, result: asked[replied++]!.params }
                  : { v: PTY_HOST_PROTOCOL_VERSION, type: 'loss', ptyId: `e${events++}`, fromSeq: 0, toSeq: 1 },
              ),
            )
            void (async () => {
              for (let offset = 0, i = 0; offset < bytes.length; i++) {
                const length = cuts[i % cuts.length]!
                socket.write(bytes.subarray(offset, offset + length))
                offset += length
                if (pauses[i % pauses.length]) await new Promise((resolve) => setImmediate(resolve))
              }
            })()
          })
          try {
            const connection = await PtyHostConnection.open(ptyHostPaths(fake.socketPath), 5_000)
            const seen: string[] = []
            connection.listen((event) => seen.push(String((event as { ptyId?: unknown }).ptyId)), () => undefined)
            if (requestCount === 0) connection.request('list', {}).catch(() => undefined)
            const replies = Array.from({ length: requestCount }, (_, i) =>
              connection.request('probe', { ptyId: `r${i}` }).then((result) => {
                seen.push(`reply r${i}`)
                return result
              }),
            )
            expect(await Promise.all(replies)).toEqual(Array.from({ length: requestCount }, (_, i) => ({ ptyId: `r${i}` })))
            const eventCount = script.length - requestCount
            await expect.poll(() => seen.filter((entry) => entry.startsWith('e')).length).toBe(eventCount)
            let replied = 0
            let events = 0
            expect(seen).toEqual(script.map((isReply) => (isReply ? `reply r${replied++}` : `e${events++}`)))
            connection.close()
          } finally {
            await fake.close()
          }
        },
      ),
      { numRuns: 15 },
    )
  })
})


/**
 * A host's refusal of a malformed request, rebuilt on the app side, has the shape of the app
 * side's own refusal (`PtyHostOptionError`): a `TypeError` that is also a `PtyHostError`, with
 * `code`, `option` and `value`. Until 7 Dec it was rebuilt as a plain `PtyHostError`, an `Error`
 * and no `TypeError`, so a host that told a programmer error by its class missed it.
 */
describe('a refusal the pty host sends back (app side)', () => {
  const cleanups = useCleanups()

  function expectOptionRefusal(error: unknown, option: string | undefined, value: unknown, message: string | RegExp): void {
    expect(error).toBeInstanceOf(TypeError)
    expect(isPtyHostError(error)).toBe(true)
    expect(error).toBeInstanceOf(PtyHostError)
    expect(error).toMatchObject({ code: 'invalid_option', option, value, processMayExist: false })
    expect((error as Error).message).toMatch(message)
  }

  it('from a real host: a request it refuses rejects with a TypeError naming the parameter and its value', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const connection = await PtyHostConnection.open(ptyHostPaths(socketPath), 5_000)
    cleanups.push(async () => connection.close())
    connection.listen(() => undefined, () => undefined)
    const refused = await connection.request('attach', { ptyId: 'p1', fromSeq: -3 }).then(
      () => 'resolved',
      (error: unknown) => error,
    )
    expectOptionRefusal(refused, 'fromSeq', -3, /`fromSeq`.*-3/)
  })

  it('from a raw frame: the option and value as the wire carries them; a value it does not carry stays undefined', async () => {
    const message = 'Expected the `exits` option to be an array of at most 65536 exits, got 5 (number)'
    const host = await fakeHost((request, socket) => {
      if (request.type !== 'request') return
      const error =
        request.method === 'forgetExits'
          ? { code: 'invalid_option', message, option: 'exits', value: 5 }
          : { code: 'invalid_option', message: 'Expected the `bytes` option to be bytes as base64 text', option: 'bytes' }
      socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: request.id, ok: false, error }))
    })
    cleanups.push(() => host.close())
    const connection = await PtyHostConnection.open(ptyHostPaths(host.socketPath), 5_000)
    cleanups.push(async () => connection.close())
    connection.listen(() => undefined, () => undefined)
    expectOptionRefusal(await connection.request('forgetExits', { exits: 5 }).catch((error: unknown) => error), 'exits', 5, message)
    const bytes = await connection.request('writeBytes', { ptyId: 'p1', bytes: '!' }).catch((error: unknown) => error)
    expectOptionRefusal(bytes, 'bytes', undefined, /`bytes`/)
  })
})
