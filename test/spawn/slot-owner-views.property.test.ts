import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toPtyIncarnationId } from '../../src/contracts/index.js'
import { agreeOnSlotOwner, readSlotOwnerViews } from '../../src/spawn/slot-owner-views.js'
import { createInMemorySlotStore, type PtySlotOwner, type PtySlotStore } from '../../src/spawn/index.js'

// Small alphabets, so that equal ids, hosts and incarnations are drawn often.
const owner: fc.Arbitrary<PtySlotOwner> = fc
  .record({
    ptyId: fc.constantFrom('a', 'b'),
    hostId: fc.constantFrom('local', 'remote'),
    incarnationId: fc.option(fc.constantFrom('i1', 'i2'), { nil: undefined }),
  })
  .map(({ ptyId, hostId, incarnationId }) => (incarnationId === undefined ? { ptyId, hostId } : { ptyId, hostId, incarnationId: toPtyIncarnationId(incarnationId) }))
const view = fc.option(owner, { nil: null })

describe('agreeOnSlotOwner: the one rule a slot spawn and adoptSlot read a slot by', () => {
  it('an empty view never conflicts: the owner is the other view, as it is', () => {
    fc.assert(
      fc.property(view, (only) => {
        expect(agreeOnSlotOwner(only, null)).toEqual({ kind: 'agreed', owner: only })
        expect(agreeOnSlotOwner(null, only)).toEqual({ kind: 'agreed', owner: only })
      }),
    )
  })

  it('is symmetric in whether the views conflict', () => {
    fc.assert(
      fc.property(view, view, (a, b) => {
        expect(agreeOnSlotOwner(a, b).kind).toBe(agreeOnSlotOwner(b, a).kind)
      }),
    )
  })

  it('conflicts exactly when the PTY, the host, or two attested incarnations differ', () => {
    fc.assert(
      fc.property(owner, owner, (live, persisted) => {
        const differ =
          live.ptyId !== persisted.ptyId ||
          live.hostId !== persisted.hostId ||
          (live.incarnationId !== undefined && persisted.incarnationId !== undefined && live.incarnationId !== persisted.incarnationId)
        expect(agreeOnSlotOwner(live, persisted).kind).toBe(differ ? 'conflict' : 'agreed')
      }),
    )
  })

  it('an agreed owner keeps every incarnation either view attested (the live one first)', () => {
    fc.assert(
      fc.property(owner, fc.option(fc.constantFrom('i1', 'i2'), { nil: undefined }), (live, persistedIncarnation) => {
        const persisted: PtySlotOwner = { ptyId: live.ptyId, hostId: live.hostId }
        if (persistedIncarnation !== undefined) persisted.incarnationId = toPtyIncarnationId(persistedIncarnation)
        const views = agreeOnSlotOwner(live, persisted)
        if (views.kind === 'conflict') return
        expect(views.owner?.incarnationId).toBe(live.incarnationId ?? persisted.incarnationId)
        expect(views.owner !== null && 'incarnationId' in views.owner).toBe((live.incarnationId ?? persisted.incarnationId) !== undefined)
      }),
    )
  })
})

describe('a store that answers incarnationId: null (a SQL NULL, a JSON null) — read as not attested (readSlotOwnerViews)', () => {
  it('agrees exactly as the same views without the key (before: null contradicted every incarnation, and was kept as a fence nothing matches)', async () => {
    await fc.assert(
      fc.asyncProperty(view, view, fc.boolean(), fc.boolean(), async (live, persisted, liveNull, persistedNull) => {
        const withNull = (v: PtySlotOwner | null, asNull: boolean): PtySlotOwner | null =>
          v === null || !asNull ? v : ({ ptyId: v.ptyId, hostId: v.hostId, incarnationId: null } as unknown as PtySlotOwner)
        const without = (v: PtySlotOwner | null, asNull: boolean): PtySlotOwner | null => (v === null || !asNull ? v : { ptyId: v.ptyId, hostId: v.hostId })
        const storeAnswering = (liveView: PtySlotOwner | null, persistedView: PtySlotOwner | null): PtySlotStore => ({
          ...createInMemorySlotStore(),
          getLiveOwner: () => liveView,
          getPersistedOwner: () => persistedView,
        })
        expect(await readSlotOwnerViews(storeAnswering(withNull(live, liveNull), withNull(persisted, persistedNull)), { key: 'pane' })).toEqual(
          await readSlotOwnerViews(storeAnswering(without(live, liveNull), without(persisted, persistedNull)), { key: 'pane' }),
        )
      }),
    )
  })
})
