/**
 * A provider may answer a spawn with an optional field valued `undefined` (the provider-side types
 * allow it: a host compiled with `exactOptionalPropertyTypes` builds its reply from values it holds
 * as `T | undefined`). The pipeline reads such a field as absent, and its outcome's `result` — what
 * a host driving `ptykit/spawn` itself reads, spreads over defaults and stores — has the key left
 * out, as the controller's reply does (before: the provider's `undefined` keys were handed on, so
 * `{ cols: 80, ...outcome.result }` lost its default and `'incarnationId' in result` said yes).
 */
import { describe, expect, it } from 'vitest'
import type { PtySpawnResult } from '../../src/contracts/index.js'
import {
  createInMemoryPtyRuntime,
  createInMemorySlotStore,
  createRuntimePtySpawnState,
  executeRuntimePtySpawn,
} from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

const OPTIONAL_REPLY_FIELDS = ['pid', 'incarnationId', 'isReattach', 'exitedBeforeSpawnReply', 'providerSequence', 'hostReportsChildExitStatus', 'cols', 'rows'] as const

/** The keys of `value` whose value is `undefined`. */
function undefinedKeys(value: object): string[] {
  return Object.entries(value)
    .filter(([, field]) => field === undefined)
    .map(([key]) => key)
}

describe('a spawn reply with undefined-valued optional fields', () => {
  it.each([
    ['a fresh spawn', false],
    ['a slot spawn (the slot store keeps what the outcome names)', true],
  ])('%s: the outcome result has those keys absent, and its other fields as the provider gave them', async (_, withSlot) => {
    const fake = createFakePtyProvider()
    const provider = {
      ...fake,
      spawn: async (options: Parameters<typeof fake.spawn>[0]): Promise<PtySpawnResult> => {
        const reply = await fake.spawn(options)
        return { id: reply.id, pid: 4242, ...Object.fromEntries(OPTIONAL_REPLY_FIELDS.filter((key) => key !== 'pid').map((key) => [key, undefined])) }
      },
    }
    const store = createInMemorySlotStore()
    const state = createRuntimePtySpawnState(
      { resolveProvider: (hostId) => (hostId === 'local' ? provider : undefined), runtime: createInMemoryPtyRuntime(), store },
      withSlot ? { slot: { key: 'pane' } } : {},
    )
    const outcome = await executeRuntimePtySpawn(state)
    expect(outcome.result).toEqual({ id: expect.any(String), pid: 4242 })
    expect(undefinedKeys(outcome.result)).toEqual([])
    expect('incarnationId' in outcome.result).toBe(false)
    expect(state.outcome).toBe(outcome)
    if (withSlot) expect(undefinedKeys(outcome.slotOwner!)).toEqual([])
  })
})
