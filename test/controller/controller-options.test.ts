import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { resolvePtyControllerOptions } from '../../src/controller/controller-options.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { argumentRefusalOf } from '../support/bad-input.js'

describe('controller options', () => {
  const provider = createFakePtyProvider()

  it('works with just a provider: in-memory runtime, store and claims, system clock', async () => {
    const controller = createPtyController({ provider })
    const reply = await controller.spawn({ cols: 90, rows: 20 })
    expect(reply).toMatchObject({ hostId: 'local', isReattach: false })
    expect(controller.getSize(reply.id)).toEqual({ cols: 90, rows: 20 })
    await controller.dispose()
  })

  it('accepts a providers record as well as a Map', () => {
    const resolved = resolvePtyControllerOptions({ providers: { local: provider, 'ssh:a': createFakePtyProvider() } })
    expect([...resolved.providers.keys()]).toEqual(['local', 'ssh:a'])
  })

  it.each([
    [{}, 'Expected exactly one of the `provider` and `providers` options, got neither', 'providers', undefined],
    [{ provider, providers: { local: provider } }, 'Expected exactly one of the `provider` and `providers` options, got both', 'provider', provider],
    [{ provider: { name: 'x' } }, 'Expected the `provider` option to be a PtyProvider, got {"name":"x"} (object)', 'provider', { name: 'x' }],
    [{ providers: {} }, 'Expected the `providers` option to register at least one host, got an empty registry', 'providers', {}],
    // An array would register hosts "0", "1"…, and every spawn would find "local" unreachable.
    [{ providers: [{ name: 'p' }] }, 'Expected the `providers` option to be a record or a Map, got [{"name":"p"}] (array)', 'providers', [{ name: 'p' }]],
    [{ providers: { local: 3 } }, 'Expected `providers["local"]` to be a PtyProvider, got 3 (number)', 'providers["local"]', 3],
    [{ provider, clock: {} }, 'Expected the `clock` option to have now, setTimeout and clearTimeout, got {} (object)', 'clock', {}],
    [{ provider, store: 5 }, 'Expected the `store` option to be an object with getLiveOwner, getPersistedOwner, bindOwner, retireOwner, got 5 (number)', 'store', 5],
    [{ provider, claims: [] }, 'Expected the `claims` option to be an object with ensure, find, release, owners, got [] (array)', 'claims', []],
    [{ provider, runtime: null }, 'Expected the `runtime` option to be an object, got null (null)', 'runtime', null],
    [{ provider, flowControl: true }, 'Expected the `flowControl` option to be an object or false, got true (boolean)', 'flowControl', true],
    [
      { provider, flowControl: { highWatermarkChars: 0 } },
      'Expected the `flowControl.highWatermarkChars` option to be a positive integer, got 0 (number)',
      'flowControl.highWatermarkChars',
      0,
    ],
    [
      { provider, flowControl: { highWatermarkChars: 10, lowWatermarkChars: 10 } },
      'Expected the `flowControl.lowWatermarkChars` option to be below `highWatermarkChars` (10), got 10 (number)',
      'flowControl.lowWatermarkChars',
      10,
    ],
    [
      { provider, flowControl: { pauseMaxHoldMs: Number.POSITIVE_INFINITY } },
      'Expected the `flowControl.pauseMaxHoldMs` option to be a positive number, got Infinity (number)',
      'flowControl.pauseMaxHoldMs',
      Number.POSITIVE_INFINITY,
    ],
    [{ provider, stop: { forceAfterMs: -5 } }, 'Expected the `stop.forceAfterMs` option to be a non-negative number, got -5 (number)', 'stop.forceAfterMs', -5],
  ] as [object, string, string, unknown][])('rejects %j', (options, message, option, value) => {
    // Typed as every refused argument (code, option, value), since 7 Dec.
    expect(() => createPtyController(options as never)).toThrow(argumentRefusalOf(message, option, value))
  })
})
