import { readSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { withoutStackTraces } from '../../src/node-pty/without-stack-traces.js'

/** A descriptor no process can have open (beyond any fd table): every read of it fails with EBADF. */
const CLOSED_FD = 2 ** 31 - 1

/** The frames of an error's stack (its `at …` lines). */
const frames = (error: unknown): string[] => String((error as Error).stack).split('\n').filter((line) => line.trim().startsWith('at '))

/** The error a read of {@link CLOSED_FD} throws, read through `run` (fails when nothing is thrown). */
function failedRead(run: (read: () => number) => unknown = (read) => read()): NodeJS.ErrnoException {
  try {
    run(() => readSync(CLOSED_FD, Buffer.alloc(8), 0, 8, null))
  } catch (error) {
    return error as NodeJS.ErrnoException
  }
  throw new Error('Expected the read of a closed descriptor to throw')
}

describe('withoutStackTraces', () => {
  it('lets a system call fail with its code and no stack trace, and leaves every other error its stack', () => {
    const before = Error.stackTraceLimit
    const thrown = failedRead(withoutStackTraces)
    expect(thrown.code).toBe('EBADF')
    expect(frames(thrown)).toEqual([])
    // Restored after a throw, and after a return.
    expect(Error.stackTraceLimit).toBe(before)
    expect(withoutStackTraces(() => 42)).toBe(42)
    expect(Error.stackTraceLimit).toBe(before)
    // The same failure outside keeps its frames.
    expect(frames(failedRead()).length).toBeGreaterThan(0)
  })

  it('leaves the limit alone where it cannot be set (Error frozen after start-up): the call runs, its error keeps its stack', () => {
    const descriptor = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit')!
    Object.defineProperty(Error, 'stackTraceLimit', { ...descriptor, writable: false })
    try {
      const thrown = failedRead(withoutStackTraces)
      expect(thrown.code).toBe('EBADF')
      expect(frames(thrown).length).toBeGreaterThan(0)
      expect(withoutStackTraces(() => 'ran')).toBe('ran')
    } finally {
      Object.defineProperty(Error, 'stackTraceLimit', descriptor)
    }
  })
})
