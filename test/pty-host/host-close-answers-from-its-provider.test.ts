/**
 * A pty host that closes disposes its own node-pty provider first, then answers the requests in
 * flight and drops its clients. Its provider must go on answering after that dispose (as it did
 * before the rule of `PtyProvider.dispose`, which refuses every call of a disposed provider): a
 * client that leaves then removes its flow-control requests, and the resume of a paused session
 * threw `provider_disposed` — an uncaught exception in the host, while it closed.
 */
import { describe, expect, it } from 'vitest'
import { startPtyHost } from 'ptykit/pty-host'
import { waitFor } from '../node-pty/pty-test-support.js'
import { hostFixture, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('a pty host that closes', () => {
  it('with a client holding a session paused: no uncaught exception from its disposed provider', async () => {
    const { socketPath } = hostFixture(cleanups)
    const uncaught: unknown[] = []
    const onUncaught = (error: unknown): void => void uncaught.push(error)
    process.on('uncaughtException', onUncaught)
    cleanups.push(async () => void process.off('uncaughtException', onUncaught))
    const host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(() => host.close())
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 60'] })
    // Paused by the app: the host holds a flow request of this client, resumed when it leaves.
    app.pauseProducer(id)
    await app.listProcesses() // the pause has reached the host (sent before this request)
    const exited = new Promise<void>((resolve) => app.onExit((event) => (event.id === id ? resolve() : undefined)))
    await host.close()
    await exited
    await waitFor(() => (app.connected ? undefined : true), 'the app to see the connection closed')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(uncaught).toEqual([])
  }, 20_000)
})
