import { describe, expect, it } from 'vitest'
import { createSshProvider } from 'ptykit/ssh'

// The SSH provider's shutdown checks `deadlineMs` before anything else (20cf789); its listing
// checks it only once the connection is up, so a duration given as `deadlineMs` is reported as
// `transport_lost` (or `provider_disposed`) — the programmer error is hidden behind a transient one.
describe('SSH listProcesses refuses a duration given as deadlineMs first', () => {
  const options = { host: '127.0.0.1', port: 9, username: 'nobody', privateKey: 'unused', hostVerifier: () => false, hostId: 'ssh:listing-budget' } as never

  it('with no connection open', async () => {
    const provider = createSshProvider(options)
    try {
      await expect(provider.listProcesses({ deadlineMs: 5_000 })).rejects.toThrow(TypeError)
    } finally {
      await provider.dispose()
    }
  })

  // Once disposed, every call is refused `provider_disposed` whatever its arguments (the rule of
  // `PtyProvider.dispose`, one for every bundled provider): not a transient failure that hides the
  // programmer error, but one itself — nothing that provider is asked answers any more.
  it('once disposed: provider_disposed, naming the method', async () => {
    const provider = createSshProvider(options)
    await provider.dispose()
    await expect(provider.listProcesses({ deadlineMs: 5_000 })).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`listProcesses`') })
    await expect(provider.shutdown('x', { deadlineMs: 5_000 })).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`shutdown`') })
  })
})
