/**
 * helper-133: what the refused-attach overlap fix (b13191e) keeps of a record it no longer forgets.
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { afterEach, describe, expect, it } from 'vitest'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'
import { fakeHost, okReplyFrame } from './pty-host-test-support.js'

const refusal = (id: unknown, code: string): Buffer =>
  encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'reply', id, ok: false, error: { code, message: code } })

describe('pty host provider: a refused attach overlapping another attach of the id (helper-133)', () => {
  let host: Awaited<ReturnType<typeof fakeHost>> | null = null
  afterEach(async () => {
    await host?.close()
    host = null
  })

  it("spawn({ sessionId }) (attach, else spawn) overlapping an attach-only restore of an absent session spawns it: the attach's record does not make the id 'in use'", async () => {
    let attaches = 0
    host = await fakeHost((message, socket) => {
      if (message.type !== 'request') return
      if (message.method === 'attach') {
        // The first attach (the restore path) is answered late, the second (spawn's) at once: both absent.
        const late = attaches++ === 0
        if (late) setTimeout(() => socket.write(refusal(message.id, 'pty_absent')), 150)
        else socket.write(refusal(message.id, 'pty_absent'))
        return
      }
      socket.write(okReplyFrame(message.id, message.method === 'spawn' ? { pid: 4243, incarnationId: 'inc-2' } : null))
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    const restore = app.attach('s1')
    const create = app.spawn({ file: 'cat', sessionId: 's1' })
    const [restored, created] = await Promise.allSettled([restore, create])
    expect(restored).toMatchObject({ status: 'rejected', reason: { code: 'pty_absent' } })
    // Before b13191e the spawn went ahead; since, it is refused as pty_id_in_use though no PTY holds the id.
    expect(created).toMatchObject({ status: 'fulfilled', value: { id: 's1', incarnationId: 'inc-2' } })
    await host.close()
    host = null
    await app.dispose().catch(() => undefined)
  }, 10_000)

  it("a reconnect does not fence the kept record to the refused attach's stale incarnation (no exit reported for it)", async () => {
    let connections = 0
    const seen = new WeakSet<object>()
    host = await fakeHost((message, socket) => {
      if (!seen.has(socket)) {
        seen.add(socket)
        connections++
      }
      if (message.type !== 'request') return
      if (message.method !== 'attach') {
        socket.write(okReplyFrame(message.id, null))
        return
      }
      const params = message.params as { ptyId: string; fromSeq: number | null; expectedIncarnationId?: string }
      if (params.expectedIncarnationId !== undefined && params.expectedIncarnationId !== 'inc-1') {
        socket.write(refusal(message.id, 'pty_live_other_incarnation'))
        return
      }
      // The first connection drops under the plain attach (its reply never comes).
      if (connections === 1) {
        setTimeout(() => socket.destroy(), 50)
        return
      }
      socket.write(okReplyFrame(message.id, { id: params.ptyId, pid: 4242, incarnationId: 'inc-1', replayFrom: params.fromSeq ?? 0, lostChars: 0, exited: false }))
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    const exits: unknown[] = []
    app.onExit((event) => exits.push(event))
    const stale = app.attach('s1', { expectedIncarnationId: 'inc-0' as never })
    const plain = app.attach('s1')
    await expect(stale).rejects.toMatchObject({ code: 'pty_live_other_incarnation' })
    await expect(plain).rejects.toMatchObject({ code: 'transport_lost' })
    for (let i = 0; i < 200 && !app.connected; i++) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(app.connected).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 200))
    // The session runs (inc-1): no exit is reported, least of all one of inc-0, which this app never held.
    expect(exits).toEqual([])
    await host.close()
    host = null
    await app.dispose().catch(() => undefined)
  }, 10_000)
})
