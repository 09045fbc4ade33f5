// Bad input from a plain-JavaScript caller (helper-155's audit): every function of the algebra that
// takes a cause or an observation either answers from a well-formed one or throws a TypeError that
// shows what it got — never a raw "Cannot read properties of undefined", never an answer about a
// value that is not a cause (the whole exit event passed instead of `event.cause` was "proven").
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  describeTerminalExitCause,
  isDeliberateTerminalExit,
  isProvenExitCause,
  isTerminalExitCause,
  resolveProcessExitCause,
} from '../../src/exit-cause/index.js'

/** Not a cause: anything fast-check makes that the strict guard refuses, plus the usual mix-ups. */
const notACause = fc.oneof(
  fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true, withTypedArray: true }).filter((value) => !isTerminalExitCause(value)),
  fc.constantFrom<unknown>(undefined, null, 0, 'exited', {}, [], { code: 0, cause: { kind: 'exited', exitCode: 0 } }, { kind: 'exited' }, { kind: 'signaled', signal: -1 }),
)

const NOT_A_CAUSE = /^Expected a TerminalExitCause \(.*\), got /

describe('exit-cause functions refuse what is not a cause, by name', () => {
  it('describeTerminalExitCause, isProvenExitCause and isDeliberateTerminalExit throw the same TypeError for a non-cause', () => {
    fc.assert(
      fc.property(notACause, (value) => {
        for (const fn of [describeTerminalExitCause, isProvenExitCause, isDeliberateTerminalExit]) {
          let thrown: unknown
          try {
            fn(value as never)
          } catch (error) {
            thrown = error
          }
          expect(thrown, `${fn.name}(${String(typeof value)})`).toBeInstanceOf(TypeError)
          expect((thrown as Error).message).toMatch(NOT_A_CAUSE)
        }
      }),
    )
  })

  it('an exit event passed whole is not a proven exit: the TypeError says to pass its cause', () => {
    const event = { ptyId: 'a', code: 0, cause: { kind: 'unknown', reason: 'cause_unreported' } }
    expect(() => isProvenExitCause(event as never)).toThrow(/it has a `cause`: pass that/)
    expect(() => isDeliberateTerminalExit(event as never)).toThrow(/it has a `cause`: pass that/)
    expect(isProvenExitCause(event.cause as never)).toBe(false)
  })

  it('a provider exit event whose `cause` is undefined (absent: the provider could not tell) gets no "pass its cause" hint — there is none to pass', () => {
    const event = { id: 'a', code: 0, cause: undefined }
    for (const fn of [isProvenExitCause, isDeliberateTerminalExit]) {
      expect(() => fn(event as never)).toThrow(TypeError)
      expect(() => fn(event as never)).not.toThrow(/it has a `cause`/)
    }
  })

  it('resolveProcessExitCause refuses a non-object observation with a TypeError showing it', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom<unknown>(undefined, null), fc.anything({ withBigInt: true }).filter((value) => typeof value !== 'object' || value === null)), (value) => {
        expect(() => resolveProcessExitCause(value as never)).toThrow(TypeError)
        expect(() => resolveProcessExitCause(value as never)).toThrow(/^Expected the exit observation to be an object \(\{ exitCode, signal\?, hostReportsChildExitStatus\? \}\), got /)
      }),
    )
    expect(() => resolveProcessExitCause(137 as never)).toThrow('got 137')
    expect(resolveProcessExitCause({ exitCode: 137 })).toEqual({ kind: 'exited', exitCode: 137 })
  })
})
