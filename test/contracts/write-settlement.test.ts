import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { WRITE_ACCEPTED, isWriteAccepted, refusedWrite, unverifiableWrite } from 'ptykit/contracts'
import { arbitraryWriteSettlement } from 'ptykit/testing'

describe('write settlements', () => {
  it('should build a refusal with its reason', () => {
    expect(refusedWrite('pty_exited')).toEqual({ kind: 'refused', reason: 'pty_exited' })
  })

  it('should build an unverifiable settlement that says whether bytes left', () => {
    expect(unverifiableWrite('transport_lost', true)).toEqual({
      kind: 'unverifiable',
      reason: 'transport_lost',
      bytesHandedToTransport: true,
    })
    expect(unverifiableWrite('settlement_timeout', false)).toEqual({
      kind: 'unverifiable',
      reason: 'settlement_timeout',
      bytesHandedToTransport: false,
    })
  })

  it('should share one frozen accepted settlement', () => {
    expect(WRITE_ACCEPTED).toEqual({ kind: 'accepted' })
    expect(Object.isFrozen(WRITE_ACCEPTED)).toBe(true)
  })

  it('should flatten to true only for accepted — never for a refusal or an unverifiable write', () => {
    expect(isWriteAccepted(WRITE_ACCEPTED)).toBe(true)
    expect(isWriteAccepted(refusedWrite('pty_not_found'))).toBe(false)
    expect(isWriteAccepted(unverifiableWrite('partial_write', true))).toBe(false)
    fc.assert(
      fc.property(arbitraryWriteSettlement(), (settlement) => {
        expect(isWriteAccepted(settlement)).toBe(settlement.kind === 'accepted')
      }),
    )
  })
})
