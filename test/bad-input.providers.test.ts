// A provider's per-call options from a plain-JavaScript caller (helper-155's audit): `spawn`,
// `shutdown` and `listProcesses` with something that is not an options object — `undefined` aside,
// which means "no options" — reject (never throw: a provider call is async-safe) with a TypeError
// naming the options and showing the value, and start or stop nothing; the next good call works.
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { notAnOptionsObject, outcome } from './support/bad-input.js'
import type { PtyProvider } from '../src/contracts/index.js'
import { createNodePtyProvider } from '../src/node-pty/index.js'
import { createFakePtyProvider } from '../src/testing/index.js'

const providers: PtyProvider[] = []
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.dispose?.()))
})

describe.each([
  ['fake', () => createFakePtyProvider()],
  ['node-pty', () => createNodePtyProvider()],
])('%s provider: per-call options that are not an object', (_name, create) => {
  it('spawn, shutdown and listProcesses reject with a TypeError showing the value; nothing starts or stops', async () => {
    const provider = create()
    providers.push(provider)
    const live = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'], cols: 80, rows: 24 })
    await fc.assert(
      fc.asyncProperty(notAnOptionsObject, async (value) => {
        for (const call of [() => provider.spawn(value as never), () => provider.shutdown(live.id, value as never), () => provider.listProcesses!(value as never)]) {
          const result = await outcome(call)
          expect(result.how).toBe('rejected')
          expect(result.value).toBeInstanceOf(TypeError)
          expect((result.value as Error).message).toMatch(/ to be an object, got /)
        }
      }),
      { numRuns: 30 },
    )
    expect((await provider.listProcesses!()).map((row) => row.id)).toEqual([live.id])
    expect(provider.hasPty(live.id)).toBe(true)
    // Usable afterwards: the right calls work.
    await provider.shutdown(live.id, { timeoutMs: 5_000 })
  })

  it('probeLiveness refuses options it would ignore — and answer about another incarnation than the one asked', async () => {
    const provider = create()
    providers.push(provider)
    const live = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'], cols: 80, rows: 24 })
    const badProbeOptions = fc.oneof(
      notAnOptionsObject,
      // `expectedIncarnationId` is the name write and shutdown use: ignored, the probe said `true` for the incarnation holding the id.
      fc.constantFrom<unknown>({ expectedIncarnationId: 'another' }, { incarnationID: 'another' }),
      fc.anything({ withBigInt: true }).filter((value) => value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 128)).map((incarnationId) => ({ incarnationId })),
    )
    await fc.assert(
      fc.asyncProperty(badProbeOptions, async (options) => {
        const result = await outcome(() => provider.probeLiveness!(live.id, options as never))
        expect(result.how).toBe('rejected')
        expect(result.value).toBeInstanceOf(TypeError)
        expect((result.value as Error).message).toMatch(/^(Expected the liveness probe options to be an object|Unknown option `|Expected the `incarnationId` option to be an incarnation id)/)
      }),
      { numRuns: 40 },
    )
    await expect(provider.probeLiveness!(live.id, { incarnationId: 'another' as never })).resolves.toBe(false)
    await expect(provider.probeLiveness!(live.id, { incarnationId: live.incarnationId! })).resolves.toBe(true)
    await provider.shutdown(live.id, { timeoutMs: 5_000 })
  })
})
