/**
 * An environment value may be a secret (a token, a password): a spawn that refuses one names the
 * variable, never its value — not in the message, not on the error, not in its `cause` chain. A
 * host logs such errors whole (`util.inspect`, a logger's error serializer), so the check here is
 * the inspected error, as deep as it goes, through every layer that refuses an `env`: the spawn
 * pipeline's own validation, the node-pty provider, the pty host (its host-side provider and its
 * frame limit) and the SSH provider (which refuses before it connects; a value that is not a
 * string is tested with a real sshd in ssh-provider.failures.test.ts).
 */
import { inspect } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createSshProvider } from 'ptykit/ssh'
import { isPtySpawnError } from 'ptykit/spawn'
import { createHarness } from './controller/controller-harness.js'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host/pty-host-test-support.js'

const cleanups = useCleanups()

/** A recognizable secret: no message, option name or type word could contain it by chance. */
const SECRET = 'sk-live-7f3a9c1e5b'

/** Spawns whose `env` is refused for its value, with the variable each refusal must name. */
const REFUSED_ENVS: [what: string, env: unknown, option: string][] = [
  ['a value with a NUL', { TOKEN: `${SECRET}\0tail` }, 'env.TOKEN'],
  ['a value that is not a string', { TOKEN: [SECRET] }, 'env.TOKEN'],
  ['an env that is not an object', [`TOKEN=${SECRET}`], 'env'],
]

/** Asserts `error` is an `invalid_spawn_options` refusal naming `option`, with `SECRET` nowhere in it. */
function expectRefusedWithoutSecret(error: unknown, option: string): void {
  expect(isPtySpawnError(error) && [error.code, error.option, error.outcome]).toEqual(['invalid_spawn_options', option, 'not_started'])
  expect((error as Error).message).toContain('[redacted]')
  expect(inspect(error, { depth: 20 })).not.toContain(SECRET)
}

describe('a refused environment value is never echoed', () => {
  it('by the spawn pipeline: a lone surrogate in an env value, for any value', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 8 }), fc.constantFrom('\uD800', '\uDFFF'), async (secret, lone) => {
        const h = createHarness()
        const error = await h.controller.spawn({ env: { TOKEN: `${secret}${lone}` } }).catch((caught: unknown) => caught)
        expect(isPtySpawnError(error) && [error.code, error.option, error.value]).toEqual(['invalid_spawn_options', 'env.TOKEN', undefined])
        // What the program would receive is named (the lone surrogate and its index), not the value.
        expect((error as Error).message).toContain(`at index ${secret.length}`)
        expect(inspect(error, { depth: 20 })).not.toContain(secret)
        expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
      }),
      { numRuns: 50 },
    )
  })

  it.each(REFUSED_ENVS)('by the node-pty provider: %s', async (_what, env, option) => {
    const controller = createPtyController({ provider: createNodePtyProvider() })
    try {
      const error = await controller.spawn({ file: '/bin/sh', env: env as never }).catch((caught: unknown) => caught)
      expectRefusedWithoutSecret(error, option)
      expect(await controller.listProcesses()).toEqual([])
    } finally {
      await controller.dispose()
    }
  })

  it.each(REFUSED_ENVS)("by the pty host's provider, across the wire: %s", async (_what, env, option) => {
    const { socketPath } = await inProcessHost(cleanups)
    const controller = createPtyController({ provider: providerDisposedAfter(cleanups, socketPath, { autoStart: false }) })
    cleanups.push(() => controller.dispose())
    const error = await controller.spawn({ file: '/bin/sh', env: env as never }).catch((caught: unknown) => caught)
    expectRefusedWithoutSecret(error, option)
  })

  it.each([
    ['a value with a NUL', { TOKEN: `${SECRET}\0tail` }, 'env.TOKEN'],
    ['an env that is not an object', [`TOKEN=${SECRET}\0`], 'env'],
  ])('by the SSH provider, before it connects: %s', async (_what, env, option) => {
    // Nothing listens on port 1: the refusal must come before any connection is tried.
    const provider = createSshProvider({ host: '127.0.0.1', port: 1, username: 'nobody', agent: '/nonexistent/agent.sock', hostVerifier: () => true })
    const controller = createPtyController({ provider })
    try {
      const error = await controller.spawn({ file: '/bin/true', env: env as never }).catch((caught: unknown) => caught)
      expectRefusedWithoutSecret(error, option)
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  })

  it("by the pty host's frame limit: an env too large to send is named, and not kept", async () => {
    const { socketPath } = await inProcessHost(cleanups, { maxFrameBytes: 64 * 1024 })
    const controller = createPtyController({ provider: providerDisposedAfter(cleanups, socketPath, { autoStart: false }) })
    cleanups.push(() => controller.dispose())
    const error = await controller.spawn({ file: '/bin/sh', env: { TOKEN: SECRET, PADDING: 'x'.repeat(128 * 1024) } }).catch((caught: unknown) => caught)
    expect(isPtySpawnError(error) && [error.code, error.option, error.value, error.outcome]).toEqual(['invalid_spawn_options', 'env', undefined, 'not_started'])
    expect(inspect(error, { depth: 20 })).not.toContain(SECRET)
  })

  it('a value whose inspection throws (a revoked proxy) is still refused as that variable', async () => {
    const { proxy, revoke } = Proxy.revocable({}, {})
    revoke()
    const controller = createPtyController({ provider: createNodePtyProvider() })
    try {
      const error = await controller.spawn({ file: '/bin/sh', env: { TOKEN: proxy as never } }).catch((caught: unknown) => caught)
      expect(isPtySpawnError(error) && [error.code, error.option]).toEqual(['invalid_spawn_options', 'env.TOKEN'])
      expect((error as Error).message).toContain('[redacted] (object)')
    } finally {
      await controller.dispose()
    }
  })

  it('other refused options still show their value', async () => {
    const controller = createPtyController({ provider: createNodePtyProvider() })
    try {
      const error = await controller.spawn({ file: '/bin/sh', cwd: `/no/such/${SECRET}` }).catch((caught: unknown) => caught)
      expect(isPtySpawnError(error) && [error.code, error.option, error.value]).toEqual(['invalid_spawn_options', 'cwd', `/no/such/${SECRET}`])
      expect((error as Error).message).toContain(SECRET)
    } finally {
      await controller.dispose()
    }
  })
})
