/**
 * Concurrent attaches of one session (a window's two restore paths), one of them refused. The
 * refused one forgot the shared record (still `spawning`) while the accepted one waited: that one
 * then resolved on a record no longer in the table, and the session's output was dropped. Kept for
 * the other attach instead, the record must neither make the id look in use to an attach-or-spawn
 * (`spawn({ sessionId })`) nor keep the incarnation the refusal proved stale.
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { answerAttach, fakeAttachHost, inProcessHost, okReplyFrame, onceConnectedAgain, refusalFrame, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host provider: a refused attach overlapping an accepted one', () => {
  it('keeps the record the accepted attach follows: its output is delivered', async () => {
    const text = 'hello world\r\n'
    const host = await fakeAttachHost(cleanups, (request, socket) => {
      const expected = request.params.expectedIncarnationId
      if (expected !== undefined && expected !== 'inc-1') socket.write(refusalFrame(request.id, 'pty_live_other_incarnation'))
      else answerAttach(socket, request, text)
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
    await app.dispose().catch(() => undefined)
  }, 10_000)
  it('forgets the record once the last of the overlapping attaches is refused too', async () => {
    const host = await fakeAttachHost(cleanups, ({ id }, socket) => socket.write(refusalFrame(id, 'pty_absent')), { pid: 4243, incarnationId: 'inc-2' })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    const first = app.attach('s1', { expectedIncarnationId: 'inc-0' as never })
    const second = app.attach('s1')
    await expect(first).rejects.toMatchObject({ code: 'pty_absent' })
    await expect(second).rejects.toMatchObject({ code: 'pty_absent' })
    // Nothing left behind that holds the id (a spawn under it is not refused as in use).
    await expect(app.spawn({ file: 'cat', sessionId: 's1', isNewSession: true })).resolves.toMatchObject({ id: 's1', incarnationId: 'inc-2' })
    await host.close()
    await app.dispose().catch(() => undefined)
  }, 10_000)
})

describe('pty host provider: the record a refused attach keeps for another attach of the id', () => {
  it("spawn({ sessionId }) (attach, else spawn) overlapping an attach-only restore of an absent session spawns it: the attach's record does not make the id 'in use'", async () => {
    let attaches = 0
    const host = await fakeAttachHost(
      cleanups,
      ({ id }, socket) => {
        // The first attach (the restore path) is answered late, the second (spawn's) at once: both absent.
        const late = attaches++ === 0
        if (late) setTimeout(() => socket.write(refusalFrame(id, 'pty_absent')), 150)
        else socket.write(refusalFrame(id, 'pty_absent'))
      },
      { pid: 4243, incarnationId: 'inc-2' },
    )
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    const restore = app.attach('s1')
    const create = app.spawn({ file: 'cat', sessionId: 's1' })
    const [restored, created] = await Promise.allSettled([restore, create])
    expect(restored).toMatchObject({ status: 'rejected', reason: { code: 'pty_absent' } })
    // Before b13191e the spawn went ahead; since, it is refused as pty_id_in_use though no PTY holds the id.
    expect(created).toMatchObject({ status: 'fulfilled', value: { id: 's1', incarnationId: 'inc-2' } })
    await host.close()
    await app.dispose().catch(() => undefined)
  }, 10_000)

  it("a reconnect does not fence the kept record to the refused attach's stale incarnation (no exit reported for it)", async () => {
    const host = await fakeAttachHost(cleanups, ({ id, params }, socket, connection) => {
      if (params.expectedIncarnationId !== undefined && params.expectedIncarnationId !== 'inc-1') {
        socket.write(refusalFrame(id, 'pty_live_other_incarnation'))
        return
      }
      // The first connection drops under the plain attach (its reply never comes).
      if (connection === 1) {
        setTimeout(() => socket.destroy(), 50)
        return
      }
      socket.write(okReplyFrame(id, { id: params.ptyId, pid: 4242, incarnationId: 'inc-1', replayFrom: params.fromSeq ?? 0, lostChars: 0, exited: false }))
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    const exits: unknown[] = []
    app.onExit((event) => exits.push(event))
    const stale = app.attach('s1', { expectedIncarnationId: 'inc-0' as never })
    const plain = app.attach('s1')
    await expect(stale).rejects.toMatchObject({ code: 'pty_live_other_incarnation' })
    await expect(plain).rejects.toMatchObject({ code: 'transport_lost' })
    await onceConnectedAgain(app, () => undefined, 8_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    // The session runs (inc-1): no exit is reported, least of all one of inc-0, which this app never held.
    expect(exits).toEqual([])
    await host.close()
    await app.dispose().catch(() => undefined)
  }, 10_000)
})

describe('pty host provider: attach-or-spawn overlapping an attach-only restore (a real host)', () => {
  it('the spawn is not refused as pty_id_in_use when no PTY holds the id', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = createPtyHostProvider({ socketPath, autoStart: false })
    cleanups.push(() => app.dispose().catch(() => undefined))
    const outcomes: string[] = []
    for (let round = 0; round < 20; round++) {
      const id = `s${round}`
      const create = app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 5'], sessionId: id })
      const restore = app.attach(id)
      const [created, restored] = await Promise.allSettled([create, restore])
      outcomes.push(`${created.status === 'fulfilled' ? 'spawned' : (created.reason as { code: string }).code}/${restored.status === 'fulfilled' ? 'attached' : (restored.reason as { code: string }).code}`)
      if (created.status === 'fulfilled') await app.shutdown(id, { immediate: true })
    }
    expect(outcomes.filter((outcome) => outcome.startsWith('pty_id_in_use'))).toEqual([])
  }, 20_000)
})
