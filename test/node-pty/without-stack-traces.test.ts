import { readSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { withoutStackTraces } from '../../src/node-pty/without-stack-traces.js'

/** A descriptor no process can have open (beyond any fd table): every read of it fails with EBADF. */
const CLOSED_FD = 2 ** 31 - 1

/** The frames of an error's stack (its `at …` lines). */
const frames = (error: unknown): string[] => String((error as Error).stack).split('\n').filter((line) => line.trim().startsWith('at '))

describe('withoutStackTraces', () => {
  it('lets a system call fail with its code and no stack trace, and leaves every other error its stack', () => {
    const before = Error.stackTraceLimit
    let thrown: unknown
    try {
      withoutStackTraces(() => readSync(CLOSED_FD, Buffer.alloc(8), 0, 8, null))
    } catch (error) {
      thrown = error
    }
    expect((thrown as NodeJS.ErrnoException).code).toBe('EBADF')
    expect(frames(thrown)).toEqual([])
    // Restored after a throw, and after a return.
    expect(Error.stackTraceLimit).toBe(before)
    expect(withoutStackTraces(() => 42)).toBe(42)
    expect(Error.stackTraceLimit).toBe(before)
    // The same failure outside keeps its frames.
    try {
      readSync(CLOSED_FD, Buffer.alloc(8), 0, 8, null)
    } catch (error) {
      expect(frames(error).length).toBeGreaterThan(0)
    }
  })

  it('leaves the limit alone where it cannot be set (Error frozen after start-up): the call runs, its error keeps its stack', () => {
    const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!
    Object.defineProperty(Error, 'stackTraceLimit', { ...descriptor, writable: false })
    try {
      let thrown: unknown
      try {
        withoutStackTraces(() => readSync(CLOSED_FD, Buffer.alloc(8), 0, 8, null))
      } catch (error) {
        thrown = error
      }
      expect((thrown as NodeJS.ErrnoException).code).toBe('EBADF')
      expect(frames(thrown).length).toBeGreaterThan(0)
      expect(withoutStackTraces(() => 'ran')).toBe('ran')
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', descriptor)
    }
  })
})
