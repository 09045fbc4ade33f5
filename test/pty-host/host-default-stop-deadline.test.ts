/**
 * A stop that names no budget (`controller.kill`, `provider.dispose()`, a plain
 * `provider.shutdown(id)`) is carried out within the host's own default stop deadline, which a host
 * started with `startPtyHost({ nodePty: { shutdownDeadlineMs } })` may set above node-pty's 5 s.
 * The host's welcome names that deadline and the provider waits for the answer that long (plus its
 * request timeout): it used to give up at 5 s + `requestTimeoutMs` while such a host was still
 * stopping, and the controller then reported `stop_unverified` for a stop that succeeded.
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { NODE_PTY_SHUTDOWN_DEADLINE_MS } from '../../src/node-pty/index.js'
import { isRequestTimeout, PtyHostConnection } from '../../src/pty-host/pty-host-connection.js'
import { ptyHostPaths } from '../../src/pty-host/socket-security.js'
import { fakeHostClosedAfter, inProcessHost, okReplyFrame, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe("pty host: the host's default stop deadline", () => {
  it('is named in the welcome of a host started with a longer one, and node-pty\'s 5 s otherwise', async () => {
    for (const [nodePty, expected] of [
      [{ shutdownDeadlineMs: 12_000 }, 12_000],
      [{}, NODE_PTY_SHUTDOWN_DEADLINE_MS],
    ] as const) {
      const { socketPath } = await inProcessHost(cleanups, { nodePty })
      const connection = await PtyHostConnection.open(ptyHostPaths(socketPath), 5_000)
      expect(connection.hostShutdownDeadlineMs).toBe(expected)
      connection.close()
    }
  })

  it("bounds the wait for a stop without a budget: the welcome's deadline plus the request timeout", async () => {
    // A deliberately short default, so the test shows the provider uses the host's figure, not 5 s.
    const host = await fakeHostClosedAfter(
      cleanups,
      (message, socket) => {
        if (message.type !== 'request') return
        if (message.method === 'spawn') socket.write(okReplyFrame(message.id, { pid: 4242, incarnationId: 'inc-1' }))
        // `shutdown`: never answered (a host stuck on the stop).
      },
      { welcome: { shutdownDeadlineMs: 400 } },
    )
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 300 })
    const { id } = await app.spawn({ file: 'cat' })
    const started = Date.now()
    const outcome = await app.shutdown(id).then(
      () => 'resolved',
      (error: unknown) => error,
    )
    const took = Date.now() - started
    expect(isRequestTimeout(outcome)).toBe(true)
    expect(took).toBeGreaterThanOrEqual(680)
    expect(took).toBeLessThan(NODE_PTY_SHUTDOWN_DEADLINE_MS)
    await host.close()
    await app.dispose().catch(() => undefined)
  }, 10_000)

  it('is unknown (undefined) from a host whose welcome does not name it', async () => {
    const host = await fakeHostClosedAfter(cleanups, (message, socket) => {
      if (message.type === 'request' && message.method === 'spawn') socket.write(okReplyFrame(message.id, { pid: 4242, incarnationId: 'inc-1' }))
    })
    const connection = await PtyHostConnection.open(ptyHostPaths(host.socketPath), 5_000)
    expect(connection.hostShutdownDeadlineMs).toBeUndefined()
    connection.close()
  })
})
