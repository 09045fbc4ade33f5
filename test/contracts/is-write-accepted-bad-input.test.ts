// isWriteAccepted from plain JavaScript (helper-155's audit): anything that is not a settlement is
// refused with a TypeError showing it — never `false`, which reads as a refusal that never happened
// (writeWithSettlement's promise not awaited, or write()'s boolean), never a raw "Cannot read properties of null".
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isWriteAccepted, isWriteSettlement } from '../../src/contracts/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { arbitraryWriteSettlement } from '../../src/testing/index.js'

describe('isWriteAccepted', () => {
  it('answers for every settlement, and refuses everything else with a TypeError showing it', () => {
    fc.assert(
      fc.property(arbitraryWriteSettlement(), (settlement) => {
        expect(isWriteAccepted(settlement)).toBe(settlement.kind === 'accepted')
      }),
    )
    fc.assert(
      fc.property(fc.anything({ withBigInt: true }).filter((value) => !isWriteSettlement(value)), (value) => {
        expect(() => isWriteAccepted(value as never)).toThrow(TypeError)
        expect(() => isWriteAccepted(value as never)).toThrow(/^Expected a WriteSettlement \(.*\), got /)
      }),
    )
  })

  it("names the likely mix-ups: writeWithSettlement's promise, write's boolean", async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const { id } = await controller.spawn({})
    expect(() => isWriteAccepted(controller.write(id, 'x', 'driving') as never)).toThrow(/write\(\) already answers whether it was accepted/)
    const pending = Promise.resolve({ kind: 'accepted' })
    expect(() => isWriteAccepted(pending as never)).toThrow(/a promise: await it/)
    expect(isWriteAccepted(await pending as never)).toBe(true)
    await controller.dispose()
  })
})
