import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createPtyHostProvider, startPtyHost, type PtyHostProvider } from 'ptykit/pty-host'
import { waitFor } from '../node-pty/pty-test-support.js'
import { hostFixture, isAlive, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

// Like the node-pty and fake providers, a pty host's provider and an in-process host are
// AsyncDisposable: `await using` disposes the provider (stopping the sessions it owns) and closes
// the host (removing its socket) at the end of their scopes. Before, they had `dispose()` and
// `close()` only: `await using` did not compile (TS2851), and at run time it threw a TypeError.
describe('the pty host and `await using`', () => {
  it('disposes the provider, then closes the host, each at the end of its scope', async () => {
    const { socketPath } = hostFixture(cleanups)
    let pid = 0
    let escaped: PtyHostProvider | undefined
    {
      await using host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
      expect(host.socketPath).toBe(socketPath)
      {
        await using provider = createPtyHostProvider({ socketPath, autoStart: false })
        escaped = provider
        pid = (await provider.spawn({ file: 'cat' })).pid!
        expect(isAlive(pid)).toBe(true)
      }
      // The provider's dispose stopped the session it owned, and the provider refuses new work.
      await waitFor(() => (isAlive(pid) ? undefined : true), 'the session to end')
      await expect(escaped.spawn({ file: 'cat' })).rejects.toMatchObject({ code: 'provider_disposed' })
      expect(existsSync(socketPath)).toBe(true)
    }
    // The host closed: its socket is gone.
    expect(existsSync(socketPath)).toBe(false)
  }, 30_000)
})
