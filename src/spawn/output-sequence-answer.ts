import { describeValue } from '../contracts/describe-value.js'

/**
 * Internal: whether a runtime's answer is an output sequence — a finite number ≥ 0. Its
 * `notePtyOutput`, `getPtyOutputSequence` and `synchronizePtyOutputSequenceFromProvider` answers
 * become a PTY's output sequence, on which every data event's `seq` is built: trusted, `"x"` or
 * `NaN` made every later `seq` `"x5"` or `NaN`.
 */
export function isOutputSequence(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

/**
 * Internal: what a runtime hook whose answer becomes a PTY's sequence (`getPtyOutputSequence`,
 * `notePtyOutput`) answering no sequence is told as — the controller's `bookkeeping_failed`, and
 * the spawn pipeline's `registration_refused` (stage 5, before the provider is called). With
 * `ptyId`, the message names the PTY the hook was asked about.
 */
export function malformedSequenceAnswer(hook: 'getPtyOutputSequence' | 'notePtyOutput', answer: unknown, ptyId?: string): string {
  const about = ptyId === undefined ? '' : ` for PTY ${JSON.stringify(ptyId)}`
  return `The runtime answered ${hook} with ${describeValue(answer)}${about}, not an output sequence (a finite number ≥ 0)`
}

/**
 * Internal: what a sequence rebase (`synchronizePtyOutputSequenceFromProvider`) answering neither
 * `null` nor a sequence is told as — the spawn pipeline's `commit_failed` (stage 11), and the
 * controller's `attach()`, which rebases the PTY it attaches itself.
 */
export function malformedRebaseAnswer(answer: unknown, ptyId: string): string {
  return `The runtime's synchronizePtyOutputSequenceFromProvider answered ${describeValue(answer)} for PTY ${JSON.stringify(ptyId)}: expected the reconciled sequence (a finite number ≥ 0) or null`
}
