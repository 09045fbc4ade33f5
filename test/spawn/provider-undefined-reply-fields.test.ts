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

describe('the run state a host reads (`RuntimePtySpawnState.result`) after such a reply', () => {
  /** The fake, its replies carrying every optional field it does not set as `undefined` (an attach keeps `isReattach`). */
  function providerWithUndefinedFields() {
    const fake = createFakePtyProvider()
    return {
      fake,
      provider: {
        ...fake,
        spawn: async (options: Parameters<typeof fake.spawn>[0]): Promise<PtySpawnResult> => {
          const reply = await fake.spawn(options)
          const blanks = Object.fromEntries(OPTIONAL_REPLY_FIELDS.filter((key) => key !== 'pid' && !(key === 'isReattach' && reply.isReattach === true)).map((key) => [key, undefined]))
          return { id: reply.id, pid: 4242, ...blanks, ...(reply.isReattach === true ? { isReattach: true } : {}) }
        },
      },
    }
  }

  it('has those keys absent, as the outcome result has (before: the raw reply, its undefined keys kept)', async () => {
    const { provider } = providerWithUndefinedFields()
    const state = createRuntimePtySpawnState({ resolveProvider: () => provider, runtime: createInMemoryPtyRuntime() }, {})
    const outcome = await executeRuntimePtySpawn(state)
    expect(state.result).toEqual(outcome.result)
    expect(undefinedKeys(state.result!)).toEqual([])
  })

  it('also for a slot re-attach', async () => {
    const { provider } = providerWithUndefinedFields()
    const deps = { resolveProvider: () => provider, runtime: createInMemoryPtyRuntime(), store: createInMemorySlotStore() }
    await executeRuntimePtySpawn(createRuntimePtySpawnState(deps, { slot: { key: 'pane' } }))
    const state = createRuntimePtySpawnState(deps, { slot: { key: 'pane' } })
    const outcome = await executeRuntimePtySpawn(state)
    expect(outcome.result.isReattach).toBe(true)
    expect(state.result).toEqual({ id: outcome.result.id, pid: 4242, isReattach: true })
    expect(undefinedKeys(state.result!)).toEqual([])
  })

  it('also when a later stage refuses the spawn (the process was started and stopped again)', async () => {
    const { provider, fake } = providerWithUndefinedFields()
    const runtime = createInMemoryPtyRuntime()
    const state = createRuntimePtySpawnState(
      {
        resolveProvider: () => provider,
        runtime: {
          ...runtime,
          assertPtyRegistrationAllowed: () => {
            throw new Error('admission closed')
          },
        },
      },
      {},
    )
    const error = await executeRuntimePtySpawn(state).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'registration_refused', outcome: 'rolled_back' })
    expect(state.result).toEqual({ id: expect.any(String), pid: 4242 })
    expect(undefinedKeys(state.result!)).toEqual([])
    expect(fake.getPty(state.result!.id)?.live).toBe(false)
  })
})
