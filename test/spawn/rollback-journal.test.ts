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
})
