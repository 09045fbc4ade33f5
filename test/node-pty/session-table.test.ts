import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { NodePtySession } from '../../src/node-pty/node-pty-session.js'
import { NodePtySessionTable } from '../../src/node-pty/session-table.js'

/** A session as the table sees it: an id and whether its exit was delivered. */
function session(id: string): NodePtySession {
  return { id, exit: null } as unknown as NodePtySession
}

describe('NodePtySessionTable.nextSlice (the death watch poll’s round robin)', () => {
  it('gives at most `limit` sessions per call, and every session within ceil(size / limit) calls, from any starting point', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 40 }), fc.nat({ max: 50 }), (size, limit, warmup) => {
        const table = new NodePtySessionTable()
        for (let i = 0; i < size; i++) table.add(session(`pty-${i}`))
        for (let i = 0; i < warmup; i++) table.nextSlice(limit)
        const seen = new Set<string>()
        for (let call = 0; call < Math.ceil(size / limit); call++) {
          const slice = table.nextSlice(limit)
          expect(slice.length).toBeLessThanOrEqual(limit)
          expect(new Set(slice.map((s) => s.id)).size).toBe(slice.length)
          for (const s of slice) seen.add(s.id)
        }
        expect(seen.size).toBe(size)
      }),
    )
  })

  it('keeps covering the sessions still there while others end and new ones start between calls', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.tuple(fc.boolean(), fc.nat()), { maxLength: 30 }),
        (size, limit, churn) => {
          const table = new NodePtySessionTable()
          let next = 0
          for (; next < size; next++) table.add(session(`pty-${next}`))
          for (const [add, pick] of churn) {
            if (add) table.add(session(`pty-${next++}`))
            else {
              const all = [...table.values()]
              const victim = all[pick % Math.max(1, all.length)]
              if (victim !== undefined) table.ended(victim)
            }
            table.nextSlice(limit)
          }
          const present = new Set([...table.values()].map((s) => s.id))
          const seen = new Set<string>()
          for (let call = 0; call < Math.ceil(present.size / limit) + 1; call++) for (const s of table.nextSlice(limit)) seen.add(s.id)
          for (const id of present) expect(seen.has(id)).toBe(true)
        },
      ),
    )
  })

  it('remembers ended ids as exited until one is spawned again', () => {
    const table = new NodePtySessionTable()
    const a = session('a')
    table.add(a)
    expect(table.live('a')).toBe(a)
    table.ended(a)
    expect(table.live('a')).toBeUndefined()
    expect(table.hasExited('a')).toBe(true)
    table.forgetExited('a')
    expect(table.hasExited('a')).toBe(false)
  })
})
