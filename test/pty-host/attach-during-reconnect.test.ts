/**
 * An attach cut off by a dropped connection: its caller is told it failed (`transport_lost`), so
 * the app holds nothing of that session. The record it made stayed (`unknown`, no incarnation),
 * and the reconnect re-attached it: the session's output and exit were delivered to an app that
 * was told it had not attached, and that app's `dispose()` stopped the session — another app's, or
 * one the app meant to leave running. (Before that, a caller's retry overlapping the reconnect's
 * re-attach got the same output twice: the retry below delivers it once.)
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { answerAttach, fakeHostClosedAfter, okReplyFrame, onceConnectedAgain, useCleanups, type FakeAttachRequest } from './pty-host-test-support.js'
import type { Socket } from 'node:net'

const cleanups = useCleanups()

/**
 * A fake host that drops its first connection under the first attach (no reply), answers every
 * later attach at once as a live session holding `text`, and every other request ok; it records
 * each request it gets as `method ptyId` by connection.
 */
async function hostDroppingTheFirstAttach(text: string): Promise<{ socketPath: string; seen: Map<number, string[]>; close(): Promise<void> }> {
  const seen = new Map<number, string[]>()
  const numbers = new WeakMap<Socket, number>()
  let connections = 0
  const host = await fakeHostClosedAfter(cleanups, (message, socket) => {
    if (!numbers.has(socket)) numbers.set(socket, ++connections)
    const connection = numbers.get(socket)!
    if (message.type !== 'request' && message.type !== 'notify') return
    const params = message.params as { ptyId?: string }
    seen.set(connection, [...(seen.get(connection) ?? []), `${String(message.method)} ${params.ptyId ?? ''}`])
    if (message.type !== 'request') return
    if (message.method === 'attach') {
      if (connection === 1) socket.destroy()
      else answerAttach(socket, message as FakeAttachRequest, text)
      return
    }
    socket.write(okReplyFrame(message.id, message.method === 'list' ? [] : null))
  })
  return { socketPath: host.socketPath, seen, close: () => host.close() }
}

describe('pty host provider: an attach cut off by a drop', () => {
  it('leaves no record: the reconnect does not re-attach it, and a retry delivers the retained output once', async () => {
    const text = 'hello world\r\n'
    const host = await hostDroppingTheFirstAttach(text)
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    cleanups.push(() => app.dispose().catch(() => undefined))
    let delivered = ''
    app.onData(({ data }) => {
      delivered += data
    })
    await expect(app.attach('s1')).rejects.toMatchObject({ code: 'transport_lost' })
    expect(app.hasPty('s1')).toBeNull()
    // The caller tries again as soon as the reconnect's connection is there.
    await onceConnectedAgain(app, () => app.attach('s1'), 8_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(delivered).toBe(text)
    // The only attach of the second connection is the caller's: the reconnect sent none.
    expect((host.seen.get(2) ?? []).filter((request) => request.startsWith('attach'))).toEqual(['attach s1'])
  }, 10_000)

  it('is not the app’s: no output reaches it after the reconnect, and its dispose() stops nothing', async () => {
    const host = await hostDroppingTheFirstAttach('hello world\r\n')
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    let delivered = ''
    app.onData(({ data }) => {
      delivered += data
    })
    await expect(app.attach('s1')).rejects.toMatchObject({ code: 'transport_lost' })
    // Connected again (a listing reconnects), and whatever the reconnect does has been done.
    await onceConnectedAgain(app, () => app.listProcesses(), 8_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await app.dispose()
    expect(delivered).toBe('')
    expect([...host.seen.values()].flat().filter((request) => request.startsWith('shutdown'))).toEqual([])
  }, 10_000)
})
