import { describe, expect, it } from 'vitest'
import { createSshProvider, isSshProviderError } from 'ptykit/ssh'

// Like the node-pty and fake providers, the SSH provider is AsyncDisposable: `await using
// provider = createSshProvider(…)` disposes it at the end of the scope. Before, it had `dispose()`
// only: `await using` did not compile (TS2851), and at run time it threw a TypeError.
describe('the SSH provider and `await using`', () => {
  const options = { host: '127.0.0.1', port: 9, username: 'nobody', privateKey: 'unused', hostVerifier: () => false, hostId: 'ssh:await-using' } as never

  it('disposes the provider at the end of the scope', async () => {
    let escaped: ReturnType<typeof createSshProvider> | undefined
    {
      await using provider = createSshProvider(options)
      escaped = provider
    }
    const refused = await escaped.spawn({ file: 'sh' }).catch((error: unknown) => error)
    expect(isSshProviderError(refused) && refused.code).toBe('provider_disposed')
  })

})
