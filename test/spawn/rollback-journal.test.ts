import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RollbackJournal } from '../../src/spawn/rollback-journal.js'

describe('RollbackJournal', () => {
  it('rolls back in reverse order, awaiting async undos, and keeps going past an undo that throws', async () => {
    const journal = new RollbackJournal()
    const ran: string[] = []
    const broken = new Error('undo b failed')
    journal.record('a', () => void ran.push('a'))
    journal.record('b', () => {
      ran.push('b')
      throw broken
    })
    journal.record('c', async () => {
      await Promise.resolve()
      ran.push('c')
    })
    expect(journal.labels()).toEqual(['a', 'b', 'c'])
    const failures = await journal.rollBack()
    expect(ran).toEqual(['c', 'b', 'a'])
    expect(failures).toEqual([{ label: 'b', error: broken }])
  })

  it('on success runs only the always steps, in reverse', async () => {
    const journal = new RollbackJournal()
    const ran: string[] = []
    journal.record('lease', () => void ran.push('lease'), { always: true })
    journal.record('pending', () => void ran.push('pending'))
    journal.record('handle', () => void ran.push('handle'), { always: true })
    expect(await journal.finish()).toEqual([])
    expect(ran).toEqual(['handle', 'lease'])
  })

  it('runs once: a closed journal refuses new steps and runs nothing again', async () => {
    const journal = new RollbackJournal()
    let runs = 0
    journal.record('x', () => void (runs += 1))
    await journal.rollBack()
    await journal.rollBack()
    expect(runs).toBe(1)
    expect(() => journal.record('late', () => undefined)).toThrow(TypeError)
  })

  it('finish runs exactly the always steps in reverse, collects every failure, and answers at once unless an undo answers with a promise', async () => {
    const stepArb = fc.record({ always: fc.boolean(), async: fc.boolean(), throws: fc.boolean() })
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { maxLength: 8 }), async (steps) => {
        const journal = new RollbackJournal()
        const ran: number[] = []
        steps.forEach((step, index) => {
          const error = new Error(`undo ${index} failed`)
          const undo = step.async
            ? async () => {
                await Promise.resolve()
                ran.push(index)
                if (step.throws) throw error
              }
            : () => {
                ran.push(index)
                if (step.throws) throw error
              }
          journal.record(`step ${index}`, undo, { always: step.always })
        })
        const answer = journal.finish()
        const expectedOrder = steps.flatMap((step, index) => (step.always ? [index] : [])).reverse()
        const expectedFailures = expectedOrder.filter((index) => steps[index]!.throws).map((index) => ({ label: `step ${index}`, error: new Error(`undo ${index} failed`) }))
        const anyAsync = expectedOrder.some((index) => steps[index]!.async)
        expect(Array.isArray(answer)).toBe(!anyAsync)
        // The steps before the first asynchronous one ran already; the rest run after it settles, one at a time.
        const firstAsync = expectedOrder.findIndex((index) => steps[index]!.async)
        expect(ran).toEqual(firstAsync === -1 ? expectedOrder : expectedOrder.slice(0, firstAsync))
        expect(await answer).toEqual(expectedFailures)
        expect(ran).toEqual(expectedOrder)
        // Closed: nothing runs twice.
        expect(await journal.finish()).toEqual([])
        expect(ran).toEqual(expectedOrder)
      }),
    )
  })
})
