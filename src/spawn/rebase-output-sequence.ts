import type { ProviderSequence } from '../contracts/index.js'

/** A runtime's output-sequence state for one PTY. */
export type OutputSequenceState = {
  /** The count of raw output chars admitted so far. */
  sequence: number
  /** Whether a provider sequence was applied already (a later `continued` then changes nothing). */
  initialized: boolean
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

/**
 * Rebase a PTY's output sequence on the provider's `{ value, generation }`, returned on a spawn or
 * attach (the rules of the seed runtime):
 *
 * - invalid numbers (non-finite or negative, or an unknown generation) change nothing: `null`;
 * - `postSpawn = current − min(current, sequenceBeforeSpawn)` are the chars that arrived between the
 *   spawn's start and its reply;
 * - `reset` (a new stream): the sequence stays `current`, and the state counts as initialized;
 * - `continued`, the first time: `sequenceBeforeSpawn + value + postSpawn` — the provider's absolute
 *   count, placed after what the runtime had, plus the bytes that raced the reply;
 * - `continued`, already initialized: the sequence stays `current`.
 *
 * Why pure: hosts with their own runtime can reuse the exact rule without the in-memory runtime.
 */
export function rebaseOutputSequence(
  state: OutputSequenceState | undefined,
  providerSequence: ProviderSequence,
  sequenceBeforeSpawn: number,
): OutputSequenceState | null {
  if (
    !isCount(providerSequence.value) ||
    !isCount(sequenceBeforeSpawn) ||
    (providerSequence.generation !== 'continued' && providerSequence.generation !== 'reset')
  ) {
    return null
  }
  const current = state?.sequence ?? 0
  if (providerSequence.generation === 'reset') {
    return { sequence: current, initialized: true }
  }
  if (state?.initialized === true) {
    return { sequence: current, initialized: true }
  }
  const postSpawn = current - Math.min(current, sequenceBeforeSpawn)
  return { sequence: sequenceBeforeSpawn + providerSequence.value + postSpawn, initialized: true }
}
