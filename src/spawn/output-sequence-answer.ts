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

/** Internal: the runtime hooks whose answer becomes (or rebases) a PTY's output sequence. */
export type OutputSequenceHook = 'getPtyOutputSequence' | 'notePtyOutput' | 'synchronizePtyOutputSequenceFromProvider'

/**
 * Internal: the one wording of a runtime's output-sequence answer that the pipeline or the
 * controller cannot use, wherever it is met — the pipeline's `registration_refused` (stage 5,
 * `getPtyOutputSequence`) and `commit_failed` (stage 11, the rebase), the controller's
 * `bookkeeping_failed` (its reads, its stream start, `notePtyOutput`, an attach's rebase). It
 * names the hook, shows the answer, names the PTY when given, and says what was expected: a
 * sequence (a finite number ≥ 0), or — from the rebase, which may refuse the provider's numbers —
 * a sequence or `null`. The pipeline's other runtime answers are worded the same way
 * (`The runtime's acquireScopeSpawn answered …: expected …`).
 */
export function malformedSequenceAnswer(hook: OutputSequenceHook, answer: unknown, ptyId?: string): string {
  const about = ptyId === undefined ? '' : ` for PTY ${JSON.stringify(ptyId)}`
  const expected = hook === 'synchronizePtyOutputSequenceFromProvider' ? 'the reconciled sequence (a finite number ≥ 0) or null' : 'an output sequence (a finite number ≥ 0)'
  return `The runtime's ${hook} answered ${describeValue(answer)}${about}: expected ${expected}`
}
