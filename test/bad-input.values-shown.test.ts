// Every refusal shows the value it refused the one way the SDK shows values (`describeValue`),
// whatever the value (helper-155's audit): a BigInt, a Symbol or an object made
// `toPtyIncarnationId(10n)` throw "Do not know how to serialize a BigInt" instead of its own
// TypeError, and the fake's test controls did the same for a BigInt id; `slotStoreKey(undefined)`
// threw "Cannot read properties of undefined (reading 'scopeId')".
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toPtyIncarnationId } from '../src/contracts/index.js'
import { describeValue } from '../src/contracts/describe-value.js'
import { createClaimedOwnerRegistry, createInMemoryPtyRuntime, slotStoreKey } from '../src/spawn/index.js'
import { createFakePtyProvider } from '../src/testing/index.js'

const badValue = fc.oneof(
  fc.constantFrom<unknown>(undefined, null, 10n, Symbol('s'), Number.NaN, -1, 1.5, '', [], {}, () => 1, { key: 10n }),
  fc.anything({ withBigInt: true, withMap: true, withSet: true }),
)

/** The TypeError `call` throws. */
function typeErrorOf(call: () => unknown): TypeError {
  let thrown: unknown
  try {
    call()
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(TypeError)
  return thrown as TypeError
}

describe('a refused value is shown with describeValue, whatever it is', () => {
  it('toPtyIncarnationId, createClaimedOwnerRegistry({ maxEntries }), notePtyOutput and slotStoreKey', () => {
    fc.assert(
      fc.property(badValue, (value) => {
        const shown = describeValue(value)
        if (typeof value !== 'string' || value.length === 0 || value.length > 128) expect(typeErrorOf(() => toPtyIncarnationId(value as never)).message).toContain(`got ${shown}`)
        if (value !== undefined && value !== null && !(Number.isInteger(value) && (value as number) > 0)) {
          expect(typeErrorOf(() => createClaimedOwnerRegistry({ maxEntries: value as never })).message).toContain(`got ${shown}`)
        }
        if (!(Number.isInteger(value) && (value as number) >= 0)) expect(typeErrorOf(() => createInMemoryPtyRuntime().notePtyOutput('a', value as never)).message).toContain(`got ${shown}`)
        const slotLike = typeof value === 'object' && value !== null && typeof (value as { key?: unknown }).key === 'string'
        if (!slotLike) expect(typeErrorOf(() => slotStoreKey(value as never)).message).toBe(`Expected the \`slot\` argument to be a slot ({ scopeId?, key }: non-empty strings), got ${shown}`)
      }),
    )
    expect(slotStoreKey({ key: 'k' })).toBe('[null,"k"]')
  })

  it('claim registry ensure({ claim }) rejects showing the claim', async () => {
    await fc.assert(
      fc.asyncProperty(badValue.filter((value) => typeof value !== 'object' || value === null || typeof (value as { key?: unknown }).key !== 'string'), async (claim) => {
        const registry = createClaimedOwnerRegistry()
        const ensure = registry.ensure({ claim: claim as never, hostId: 'local', spawn: () => Promise.reject(new Error('not called')), isLive: () => Promise.resolve(true) })
        await expect(ensure).rejects.toThrow(TypeError)
        await expect(ensure).rejects.toThrow(describeValue(claim === null || typeof claim !== 'object' ? claim : (claim as { key?: unknown }).key))
      }),
    )
  })

  it("the fake's test controls refuse an id that is not a string, showing it", () => {
    const provider = createFakePtyProvider()
    fc.assert(
      fc.property(badValue.filter((value) => typeof value !== 'string' && value !== undefined), (id) => {
        for (const [control, call] of [
          ['emitData', () => provider.emitData(id as never, 'x')],
          ['emitExit', () => provider.emitExit(id as never, { exitCode: 0 })],
          ['setLiveness', () => provider.setLiveness(id as never, true)],
          ['failSpawn', () => provider.failSpawn(id as never)],
          ['releaseSpawn', () => provider.releaseSpawn(id as never)],
        ] as const) {
          expect(typeErrorOf(call).message).toBe(`${control}: expected the \`id\` argument to be a string, got ${describeValue(id)}`)
        }
      }),
    )
  })
})
