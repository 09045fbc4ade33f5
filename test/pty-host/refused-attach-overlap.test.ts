/**
 * Two concurrent attaches of one session, the first answered a refusal (its
 * `expectedIncarnationId` is stale), the second accepted. The refused one forgot the shared record
 * (still `spawning`) while the accepted one waited: that one then resolved on a record no longer
 * in the table, and the session's output was dropped.
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { afterEach, describe, expect, it } from 'vitest'
import { encodeFrame, encodeOutputFrame } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'
import { fakeHost, okReplyFrame } from './pty-host-test-support.js'

describe('pty host provider: a refused attach overlapping an accepted one', () => {
  let host: Awaited<ReturnType<typeof fakeHost>> | null = null
  afterEach(async () => {
    await host?.close()
    host = null
  })

  it('keeps the record the accepted attach follows: its output is delivered', async () => {
    const text = 'hello world\r\n'
    host = await fakeHost((message, socket) => {
      if (message.type !== 'request') return
      if (message.method !== 'attach') {
        socket.write(okReplyFrame(message.id, null))
        return
      }
      const params = message.params as { ptyId: string; fromSeq: number | null; expectedIncarnationId?: string }
      if (params.expectedIncarnationId !== undefined && params.expectedIncarnationId !== 'inc-1') {
        socket.write(
          encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: false, error: { code: 'pty_live_other_incarnation', message: 'another incarnation' } }),
        )
        return
      }
      const from = Math.min(params.fromSeq ?? 0, text.length)
      socket.write(okReplyFrame(message.id, { id: params.ptyId, pid: 4242, incarnationId: 'inc-1', replayFrom: from, lostChars: 0, exited: false }))
      if (from < text.length) socket.write(encodeOutputFrame(params.ptyId, text.length, text.slice(from), 'inc-1'))
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    let delivered = ''
    app.onData(({ data }) => {
      delivered += data
    })
    const stale = app.attach('s1', { expectedIncarnationId: 'inc-0' as never })
    const plain = app.attach('s1')
    await expect(stale).rejects.toMatchObject({ code: 'pty_live_other_incarnation' })
    await expect(plain).resolves.toMatchObject({ id: 's1', incarnationId: 'inc-1' })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(app.hasPty('s1')).toBe(true)
    expect(delivered).toBe(text)
    await host.close()
    host = null
    await app.dispose().catch(() => undefined)
  }, 10_000)
  it('forgets the record once the last of the overlapping attaches is refused too', async () => {
    host = await fakeHost((message, socket) => {
      if (message.type !== 'request') return
      if (message.method !== 'attach') {
        socket.write(okReplyFrame(message.id, message.method === 'spawn' ? { pid: 4243, incarnationId: 'inc-2' } : null))
        return
      }
      socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id: message.id, ok: false, error: { code: 'pty_absent', message: 'no such session' } }))
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    const first = app.attach('s1', { expectedIncarnationId: 'inc-0' as never })
    const second = app.attach('s1')
    await expect(first).rejects.toMatchObject({ code: 'pty_absent' })
    await expect(second).rejects.toMatchObject({ code: 'pty_absent' })
    // Nothing left behind that holds the id (a spawn under it is not refused as in use).
    await expect(app.spawn({ file: 'cat', sessionId: 's1', isNewSession: true })).resolves.toMatchObject({ id: 's1', incarnationId: 'inc-2' })
    await host.close()
    host = null
    await app.dispose().catch(() => undefined)
  }, 10_000)
})
