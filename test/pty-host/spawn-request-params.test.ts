import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ProviderSpawnOptions } from '../../src/contracts/index.js'
import { SPAWN_LAUNCH_KEYS } from '../../src/pty-host/protocol.js'
import { spawnRequestParams } from '../../src/pty-host/spawn-request-params.js'

/** Launch fields (any JSON-ish value, or absent) and fields that must never cross the wire. */
const spawnOptionsArb = fc.record(
  {
    ...Object.fromEntries(SPAWN_LAUNCH_KEYS.map((key) => [key, fc.oneof(fc.string(), fc.integer(), fc.array(fc.string(), { maxLength: 3 }), fc.constant(undefined))])),
    sessionId: fc.string({ minLength: 1 }),
    attachOnly: fc.boolean(),
    isNewSession: fc.boolean(),
    expectedIncarnationId: fc.string(),
    onPtySpawnCommitted: fc.constant(() => undefined),
  },
  { requiredKeys: [] },
)

describe('spawnRequestParams', () => {
  it('carries the session id and exactly the launch keys the caller set (SPAWN_LAUNCH_KEYS), nothing else', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), spawnOptionsArb, (sessionId, options) => {
        const expected: Record<string, unknown> = { sessionId }
        for (const key of SPAWN_LAUNCH_KEYS) {
          const value = (options as Record<string, unknown>)[key]
          if (value !== undefined) expected[key] = value
        }
        expect(spawnRequestParams(sessionId, options as ProviderSpawnOptions)).toStrictEqual(expected)
      }),
    )
  })
})
