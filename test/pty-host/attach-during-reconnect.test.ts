/**
 * A caller's attach overlapping the reconnect's own re-attach of a session whose record
 * never learned its incarnation (its first attach was cut off by the drop). The reconnect's
 * re-attach delivered the replay; the caller's reply then reset the stream to its replay's start
 * (`followsNow` was false: the reconnect never recorded the incarnation), and the same output
 * arrived twice.
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { answerAttach, fakeAttachHost, onceConnectedAgain, useCleanups, type FakeAttachRequest } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host provider: a caller attach overlapping the reconnect re-attach', () => {
  it('delivers the retained output once', async () => {
    const text = 'hello world\r\n'
    const held: FakeAttachRequest[] = []
    const host = await fakeAttachHost(cleanups, (message, socket, connection) => {
      // The first connection drops under the first attach (no reply).
      if (connection === 1) {
        socket.destroy()
        return
      }
      // The reconnect's re-attach is answered once the caller's attach has arrived too (both
      // sent before either is answered: the overlap), in the order they came.
      held.push(message)
      if (held.length < 2) return
      for (const request of held.splice(0)) answerAttach(socket, request, text)
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 2_000 })
    let delivered = ''
    app.onData(({ data }) => {
      delivered += data
    })
    // Cut off by the drop: the record stays, unknown, with no incarnation.
    await expect(app.attach('s1')).rejects.toMatchObject({ code: 'transport_lost' })
    // The caller tries again as soon as the reconnect's connection is there (its recovery in flight).
    await onceConnectedAgain(app, () => app.attach('s1'), 8_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(delivered).toBe(text)
    await host.close()
    await app.dispose().catch(() => undefined)
  }, 10_000)
})
