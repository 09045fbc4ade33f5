import { createConnection, type Socket } from 'node:net'
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { PTY_HOST_PROTOCOL_VERSION, startPtyHost, type PtyHostServer } from 'ptykit/pty-host'
import { encodeFrame, encodeOutputFrame, FrameDecoder, OUTPUT_FRAME_KIND, PtyHostFrameError, type OutputFrame } from '../../src/pty-host/frame-codec.js'
import { HostClient, PTY_HOST_OUTPUT_FRAME_MAX_CHARS } from '../../src/pty-host/host-client.js'
import { parseRequest, PTY_HOST_METHODS, PTY_HOST_NOTIFY_METHODS } from '../../src/pty-host/protocol.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killHostAndClean, makeSocketDir, providerOn } from './pty-host-test-support.js'

/** Feed `bytes` to one decoder cut at the given lengths (the rest in one piece); every frame decoded. */
function decodeInPieces(bytes: Buffer, cuts: readonly number[]): unknown[] {
  const decoder = new FrameDecoder()
  const decoded: unknown[] = []
  let offset = 0
  for (const cut of cuts) {
    decoded.push(...decoder.push(bytes.subarray(offset, offset + cut)))
    offset = Math.min(bytes.length, offset + cut)
  }
  decoded.push(...decoder.push(bytes.subarray(offset)))
  return decoded
}

describe('frame codec', () => {
  it('decodes any sequence of messages, however the byte stream is split', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { maxLength: 8 }), fc.array(fc.nat({ max: 64 }), { maxLength: 20 }), (messages, cuts) => {
        const bytes = Buffer.concat(messages.map((message) => encodeFrame(message)))
        const decoded = decodeInPieces(bytes, cuts)
        expect(decoded).toEqual(messages.map((message) => JSON.parse(JSON.stringify(message))))
      }),
    )
  })

  it('carries output frames (binary, raw UTF-8) among JSON frames, in order and exact, however the stream is split', () => {
    const output = fc.record(
      {
        type: fc.constant('data' as const),
        ptyId: fc.string({ minLength: 1, maxLength: 40 }),
        data: fc.string({ unit: 'grapheme', maxLength: 200 }),
        seq: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        incarnationId: fc.string({ minLength: 1, maxLength: 40 }),
      },
      { requiredKeys: ['type', 'ptyId', 'data', 'seq'] },
    )
    const json = fc.dictionary(fc.string(), fc.jsonValue())
    fc.assert(
      fc.property(fc.array(fc.oneof(output, json), { maxLength: 8 }), fc.array(fc.nat({ max: 64 }), { maxLength: 20 }), (messages, cuts) => {
        const encode = (message: Record<string, unknown>): Buffer =>
          message.type === 'data' && typeof message.seq === 'number'
            ? encodeOutputFrame(String(message.ptyId), message.seq, String(message.data), message.incarnationId as string | undefined)
            : encodeFrame(message)
        const bytes = Buffer.concat(messages.map(encode))
        const decoded = decodeInPieces(bytes, cuts)
        expect(decoded).toEqual(messages.map((message) => JSON.parse(JSON.stringify(message))))
      }),
    )
  })

  it('refuses an output frame whose header runs past its body', () => {
    const frame = encodeOutputFrame('pty-1', 5, 'hello', 'inc-1')
    expect(frame[4]).toBe(OUTPUT_FRAME_KIND)
    frame.writeUInt16BE(60_000, 4 + 1 + 8)
    expect(() => new FrameDecoder().push(frame)).toThrow(/runs past the frame/)
  })

  it('refuses an oversized header before buffering the body, and a body that is not a JSON object', () => {
    const header = Buffer.alloc(4)
    header.writeUInt32BE(1025, 0)
    expect(() => new FrameDecoder(1024).push(header)).toThrow(PtyHostFrameError)
    const notObject = Buffer.from('[1]')
    const frame = Buffer.concat([Buffer.from([0, 0, 0, notObject.length]), notObject])
    expect(() => new FrameDecoder().push(frame)).toThrow(/not a JSON object/)
  })
})

describe('request frames', () => {
  it('admits every method as a request, and only the ones nobody waits on as a notify', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PTY_HOST_METHODS), fc.nat(), (method, id) => {
        const params = { ptyId: 'p' }
        expect(parseRequest({ v: PTY_HOST_PROTOCOL_VERSION, type: 'request', id, method, params })).toEqual({
          v: PTY_HOST_PROTOCOL_VERSION,
          type: 'request',
          id,
          method,
          params,
        })
        const notify = parseRequest({ v: PTY_HOST_PROTOCOL_VERSION, type: 'notify', method, params })
        if (['ack', 'pause', 'resume', 'resize'].includes(method)) {
          expect(PTY_HOST_NOTIFY_METHODS.has(method)).toBe(true)
          expect(notify).toEqual({ v: PTY_HOST_PROTOCOL_VERSION, type: 'notify', id: null, method, params })
        } else {
          // An attach or spawn sent one-way had nobody to answer: it is a malformed frame.
          expect(notify).toBe(`${method} answers, so it must be sent as a request, not a notify`)
        }
      }),
    )
  })
})

describe('pty host: hostile clients', () => {
  const { dir, socketPath } = makeSocketDir()
  let host: PtyHostServer
  beforeAll(async () => {
    host = await startPtyHost({ socketPath, idleExitMs: 60_000, maxFrameBytes: 4096 })
  })
  afterAll(async () => {
    await host.close()
    await killHostAndClean(socketPath, dir)
  })

  /** Connect, send `bytes`, and resolve with what came back once the host closed (or `waitMs` passed). */
  function exchange(bytes: Buffer[], waitMs = 300): Promise<Buffer> {
    return new Promise((resolve) => {
      const socket: Socket = createConnection(socketPath)
      const received: Buffer[] = []
      const done = (): void => {
        clearTimeout(timer)
        socket.destroy()
        resolve(Buffer.concat(received))
      }
      const timer = setTimeout(done, waitMs)
      socket.on('data', (chunk: Buffer) => received.push(chunk))
      socket.on('error', done)
      socket.on('close', done)
      socket.on('connect', () => {
        for (const chunk of bytes) socket.write(chunk)
      })
    })
  }

  const secret = (): string => readFileSync(`${socketPath}.secret`, 'utf8').trim()

  it('names both versions when a client speaks another protocol version', async () => {
    const reply = new FrameDecoder().push(await exchange([encodeFrame({ v: 999, type: 'hello', secret: secret() })])) as Record<string, unknown>[]
    expect(reply[0]).toMatchObject({ type: 'refused', code: 'protocol_mismatch' })
    expect(String(reply[0]?.message)).toContain('999')
    expect(String(reply[0]?.message)).toContain(`version ${PTY_HOST_PROTOCOL_VERSION}`)
  })

  it('refuses a malformed request parameter as invalid_option naming the parameter and its value', async () => {
    const hello = encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'hello', secret: secret() })
    const request = (id: number, method: string, params: Record<string, unknown>): Buffer => encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'request', id, method, params })
    const replies = (new FrameDecoder().push(await exchange([hello, request(1, 'attach', { ptyId: '' }), request(2, 'attach', { ptyId: 'p1', fromSeq: -3 })])) as Record<string, unknown>[]).filter(
      (message) => message.type === 'reply',
    )
    expect(replies).toEqual([
      { v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: 1, ok: false, error: expect.objectContaining({ code: 'invalid_option', option: 'ptyId', value: '' }) },
      { v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: 2, ok: false, error: expect.objectContaining({ code: 'invalid_option', option: 'fromSeq', value: -3 }) },
    ])
  })

  it('survives any fuzzed frame stream, before and after the hello, and still serves a proper client', async () => {
    const hello = (): Buffer => encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'hello', secret: secret() })
    const frames = fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
      fc.jsonValue().map((value) => encodeFrame(value)),
      fc.record({ v: fc.constant(PTY_HOST_PROTOCOL_VERSION), type: fc.constant('request'), id: fc.integer(), method: fc.constantFrom('spawn', 'write', 'attach', 'snapshot', 'shutdown', 'list', 'nope'), params: fc.dictionary(fc.string(), fc.jsonValue()) }).map((message) => encodeFrame(message)),
      fc.nat().map((length) => {
        const header = Buffer.alloc(4)
        header.writeUInt32BE(length, 0)
        return header
      }),
    )
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(frames, { maxLength: 6 }), async (authenticate, stream) => {
        // Nothing is read from the reply: a stream the host neither closes on nor refuses (a
        // partial frame, a request it serves) needs no longer pause than 100 ms. The host runs in
        // this process and handles what was sent even after the client left; a crash fails the run.
        await exchange(authenticate ? [hello(), ...stream] : stream, 100)
      }),
      { numRuns: 60 },
    )
    const client = providerOn(socketPath, { autoStart: false })
    try {
      expect(Array.isArray(await client.listProcesses())).toBe(true)
    } finally {
      await client.dispose()
    }
  }, 60_000)
})

describe('host output frames', () => {
  it('sends output longer than a frame may be as several frames that rebuild it exactly, never splitting a surrogate pair', () => {
    const written: Buffer[] = []
    const socket = { destroyed: false, cork: () => undefined, uncork: () => undefined, write: (chunk: Buffer) => written.push(chunk) }
    const client = new HostClient(socket as unknown as Socket)
    // 2.5 frames' worth, with an emoji straddling the first frame boundary.
    const data = `${'a'.repeat(PTY_HOST_OUTPUT_FRAME_MAX_CHARS - 1)}😀${'é'.repeat(PTY_HOST_OUTPUT_FRAME_MAX_CHARS * 1.5)}`
    client.queueOutput('pty-1', data, 10 + data.length, 'inc-1')
    client.flushOutput()
    // A peer whose frame limit is just above one frame's worst case still reads every frame.
    const frames = new FrameDecoder(3 * PTY_HOST_OUTPUT_FRAME_MAX_CHARS + 64).push(Buffer.concat(written)) as OutputFrame[]
    expect(frames.length).toBeGreaterThan(1)
    expect(frames.map((frame) => frame.data).join('')).toBe(data)
    let end = 10
    for (const frame of frames) {
      end += frame.data.length
      expect(frame).toMatchObject({ type: 'data', ptyId: 'pty-1', seq: end, incarnationId: 'inc-1' })
    }
  })
})
