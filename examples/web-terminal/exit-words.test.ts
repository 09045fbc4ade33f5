// The words a terminal's status line shows at its end: what ended (its title) and why, from the
// cause's tag — never the seed's agent sentences.
import fc from 'fast-check'
import type { TerminalExitCause } from 'ptykit/exit-cause'
import { arbitraryTerminalExitCause } from 'ptykit/testing'
import { expect, it } from 'vitest'
import { describeTerminalEnd, describeTerminalExit } from './exit-words.js'

it('says why each kind of cause ended the terminal', () => {
  const cases: [TerminalExitCause, string][] = [
    [{ kind: 'exited', exitCode: 3 }, 'exited with code 3'],
    [{ kind: 'exited', exitCode: 0 }, 'exited with code 0'],
    [{ kind: 'signaled', signal: 9 }, 'killed by signal 9'],
    [{ kind: 'operator_close' }, 'closed'],
    [{ kind: 'unknown', reason: 'stop_unverified' }, 'ended (cause unknown: a stop was requested but never confirmed)'],
    [{ kind: 'unknown', reason: 'host_status_unavailable' }, 'ended (cause unknown: this host cannot report why)'],
    [{ kind: 'unknown', reason: 'cause_unreported' }, 'ended (cause unknown: the reporting host did not say why)'],
  ]
  for (const [cause, words] of cases) expect(describeTerminalEnd(cause)).toBe(words)
  expect(describeTerminalExit('/bin/bash', { kind: 'exited', exitCode: 3 })).toBe('/bin/bash exited with code 3')
  expect(describeTerminalExit('yes | head -c 4000000', { kind: 'signaled', signal: 13 })).toBe('yes | head -c 4000000 killed by signal 13')
})

it('names what ended, never an agent, with the number of the evidence, and tells distinct causes apart', () => {
  fc.assert(
    fc.property(arbitraryTerminalExitCause(), arbitraryTerminalExitCause(), (cause, other) => {
      const words = describeTerminalExit('/bin/sh', cause)
      expect(words.startsWith('/bin/sh ')).toBe(true)
      expect(words).not.toMatch(/agent/i)
      if (cause.kind === 'exited') expect(words).toContain(`code ${cause.exitCode}`)
      if (cause.kind === 'signaled') expect(words).toContain(`signal ${cause.signal}`)
      if (JSON.stringify(cause) !== JSON.stringify(other)) expect(describeTerminalEnd(cause)).not.toBe(describeTerminalEnd(other))
    }),
  )
})
