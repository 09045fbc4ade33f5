/**
 * A host that is alive but never answers a stop (stuck on it): every provider call settles, so the
 * provider's `shutdown` gives up once the stop's budget and the request timeout have passed.
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { isRequestTimeout } from '../../src/pty-host/pty-host-connection.js'
import { fakeHostClosedAfter, okReplyFrame, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host provider: a stop the host never answers', () => {
  it('rejects transport_lost (a request timeout) once the budget and the request timeout have passed, never hangs', async () => {
    const asked: { method: string; params: Record<string, unknown> }[] = []
    const host = await fakeHostClosedAfter(cleanups, (message, socket) => {
      if (message.type !== 'request') return
      asked.push({ method: String(message.method), params: message.params as Record<string, unknown> })
      if (message.method === 'spawn') socket.write(okReplyFrame(message.id, { pid: 4242, incarnationId: 'inc-1' }))
      // `shutdown`: never answered.
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 300 })
    const { id } = await app.spawn({ file: 'cat' })
    const started = Date.now()
    const outcome = await app.shutdown(id, { timeoutMs: 200 }).then(
      () => 'resolved',
      (error: unknown) => error,
    )
    const took = Date.now() - started
    expect(isRequestTimeout(outcome)).toBe(true)
    expect(outcome).toMatchObject({ code: 'transport_lost' })
    // The budget (200 ms, sent as what was left) plus the request timeout (300 ms), not before.
    expect(took).toBeGreaterThanOrEqual(480)
    expect(took).toBeLessThan(3_000)
    const stop = asked.find((request) => request.method === 'shutdown')
    expect(stop?.params.timeoutMs).toBeGreaterThan(150)
    expect(stop?.params.timeoutMs).toBeLessThanOrEqual(200)
    // Gone before the dispose, which would otherwise send its own stop to the stuck host.
    await host.close()
    await app.dispose().catch(() => undefined)
  }, 10_000)
})
