import { describe, it, expectTypeOf, assertType } from 'vitest'
import { isPtyIncarnationId, toPtyIncarnationId, type PtyIncarnationId } from 'ptykit/contracts'

describe('PtyIncarnationId', () => {
  it('is a string, but a plain string is not an incarnation id', () => {
    expectTypeOf<PtyIncarnationId>().toExtend<string>()
    expectTypeOf<string>().not.toExtend<PtyIncarnationId>()
    const plain = 'inc-1'
    // @ts-expect-error a plain string must be branded first
    assertType<PtyIncarnationId>(plain)
  })

  it('is minted by toPtyIncarnationId and narrowed by isPtyIncarnationId', () => {
    expectTypeOf(toPtyIncarnationId).returns.toEqualTypeOf<PtyIncarnationId>()
    const value: unknown = 'inc-1'
    if (isPtyIncarnationId(value)) expectTypeOf(value).toEqualTypeOf<PtyIncarnationId>()
  })
})
