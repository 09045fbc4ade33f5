import { describe, it, expectTypeOf, assertType } from 'vitest'
import type { TerminalInputKind, WriteRefusalReason, WriteSettlement, WriteUnverifiableReason } from 'ptykit/contracts'

describe('WriteSettlement', () => {
  it('has exactly three kinds', () => {
    expectTypeOf<WriteSettlement['kind']>().toEqualTypeOf<'accepted' | 'refused' | 'unverifiable'>()
  })

  it('gives refusals a reason and unverifiable writes a reason plus whether bytes left', () => {
    expectTypeOf<Extract<WriteSettlement, { kind: 'refused' }>>().toEqualTypeOf<{ kind: 'refused'; reason: WriteRefusalReason }>()
    expectTypeOf<Extract<WriteSettlement, { kind: 'unverifiable' }>>().toEqualTypeOf<{
      kind: 'unverifiable'
      reason: WriteUnverifiableReason
      bytesHandedToTransport: boolean
    }>()
    // @ts-expect-error an unverifiable write must say whether bytes were handed on
    assertType<WriteSettlement>({ kind: 'unverifiable', reason: 'transport_lost' })
    // @ts-expect-error a refusal reason cannot be an unverifiable reason
    assertType<WriteSettlement>({ kind: 'refused', reason: 'transport_lost' })
  })

  it('names the three input kinds', () => {
    expectTypeOf<TerminalInputKind>().toEqualTypeOf<'driving' | 'launch' | 'query-reply'>()
  })
})
