import { afterEach, describe, expect, it } from 'vitest'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { PTY_HOST_PROTOCOL_VERSION } from '../../src/pty-host/protocol.js'
import { createPtyHostProvider } from '../../src/pty-host/pty-host-provider.js'
import { fakeHost } from './pty-host-test-support.js'

/** Ref'd pipe handles of this process: what holds its event loop open through a Unix socket. */
const refdPipes = (): number => process.getActiveResourcesInfo().filter((resource) => resource === 'PipeWrap').length

/**
 * A scripted host whose own handles never hold the process (server and sockets unref'd): it
 * ignores a spawn of `never` (its request times out), and answers any other spawn, then exits it.
 */
function scriptedHost(): ReturnType<typeof fakeHost> {
  return fakeHost(
    (message, socket) => {
      if (message.type !== 'request' || message.method !== 'spawn') return
      const v = PTY_HOST_PROTOCOL_VERSION
      const params = message.params as { sessionId: string; file: string }
      if (params.file === 'never') return
      socket.write(encodeFrame({ v, type: 'reply', id: message.id, ok: true, result: { pid: 1 } }))
      setTimeout(() => socket.write(encodeFrame({ v, type: 'exit', ptyId: params.sessionId, code: 0 })), 10)
    },
    { unref: true },
  )
}

describe('pty host provider: what holds the app open', () => {
  let host: Awaited<ReturnType<typeof scriptedHost>> | null = null
  afterEach(async () => {
    await host?.close()
    host = null
  })

  it('a spawn whose request timed out does not keep holding the app once its live PTYs are gone', async () => {
    host = await scriptedHost()
    const before = refdPipes()
    const provider = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 100 })
    const exits: string[] = []
    provider.onExit(({ id }) => exits.push(id))
    await expect(provider.spawn({ file: 'never' })).rejects.toMatchObject({ code: 'transport_lost' })
    const { id } = await provider.spawn({ file: '/bin/true' })
    // While a PTY lives here, the connection holds the app (as a local PTY would).
    expect(refdPipes()).toBe(before + 1)
    await expect.poll(() => exits).toEqual([id])
    await new Promise((resolve) => setImmediate(resolve))
    expect(refdPipes()).toBe(before)
    await provider.detach()
  })
})
