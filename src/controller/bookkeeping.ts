import type { ProviderSequence, PtyIncarnationId, PtySlot, PtySpawnResult } from '../contracts/index.js'
import type { PtySlotOwner } from '../spawn/index.js'
import { isOutputSequence, malformedSequenceAnswer } from '../spawn/output-sequence-answer.js'
import type { ControllerCore } from './controller-core.js'

/**
 * A sequence read or rebase the runtime failed — threw, or answered no sequence (see
 * {@link Bookkeeping.sequenceBefore} and {@link Bookkeeping.rebaseAttached}): reported already; an
 * attach then answers `false`.
 */
export const RUNTIME_ANSWER_REFUSED: unique symbol = Symbol('runtime answer refused')

/**
 * The controller's calls into the host's bookkeeping — the runtime registry, the claim registry
 * and the slot store. Each is guarded the same way: a throw (or a rejection) is reported as
 * `bookkeeping_failed` and never stops the caller, since the PTY's own facts are already settled.
 */
export class Bookkeeping {
  readonly #core: ControllerCore

  constructor(core: ControllerCore) {
    this.#core = core
  }

  /** Tell the runtime the PTY exited (its early-exit fence must see it before a racing spawn). */
  noteRuntimeExit(ptyId: string, incarnationId: PtyIncarnationId | undefined): void {
    this.#guarded('The runtime threw from notePtyExit', ptyId, () => this.#core.runtime.notePtyExit?.(ptyId, incarnationId))
  }

  /** Drop the PTY from the runtime's registry. */
  forgetRuntimePty(ptyId: string): void {
    this.#guarded('The runtime threw from forgetPty', ptyId, () => this.#core.runtime.forgetPty?.(ptyId))
  }

  /**
   * Tell the runtime that a process this controller started streams from its first byte
   * (`synchronizePtyOutputSequenceFromProvider` with `stream`, from its current sequence). Runs
   * after the pipeline committed the PTY: a runtime that throws here must not fail the spawn of a
   * running, registered process (the caller got an untyped error and nobody tracked the PTY).
   * Both answers are checked as the pipeline checks them: a `getPtyOutputSequence` answer that is
   * no sequence (a finite number ≥ 0) is reported (`bookkeeping_failed`, naming the hook, the PTY
   * and the answer) and, like a throw, not handed to the rebase (the pipeline's stage 5 refuses it
   * before its rebase too); a rebase answering neither `null` nor a sequence is reported and undone
   * (`undoPtyOutputSequenceSync`), as the pipeline's stage 11 and {@link Bookkeeping.rebaseAttached} do.
   *
   * Answers the sequence the PTY's record starts from when this call settled it — the rebase's
   * answer, the sequence read when the rebase answered `null`, 0 when the read was refused (as
   * {@link Bookkeeping.runtimeOutputSequence} reads a refused answer) — or `undefined` when the
   * runtime has no rebase or its rebase was refused (then the record reads the runtime again).
   * Why: a runtime answering garbage was told once per read, twice for one spawn.
   */
  startRuntimeStream(ptyId: string, stream: ProviderSequence): number | undefined {
    if (this.#core.runtime.synchronizePtyOutputSequenceFromProvider === undefined) return undefined
    const current = this.sequenceBefore(ptyId)
    if (current === RUNTIME_ANSWER_REFUSED) return 0
    const rebased = this.#rebase(ptyId, stream, current)
    if (rebased === RUNTIME_ANSWER_REFUSED) return undefined
    return rebased ?? current
  }

  /**
   * The runtime's output sequence of a PTY, read before the provider is asked about it (the
   * pipeline's stage 5: an attach's, for its rebase; a started stream's): 0 when the runtime has no
   * `getPtyOutputSequence`, or answers `undefined` or `null` (it counts nothing for the id: the
   * seed reads it `?? 0`); {@link RUNTIME_ANSWER_REFUSED} when it threw, or answered anything else
   * that is no sequence (a finite number ≥ 0) — reported as `bookkeeping_failed`, naming the hook,
   * the PTY and the answer. Nothing is rebased on such an answer: an attach answers `false` before
   * it asks the provider, as it does for a rebase the runtime fails.
   */
  sequenceBefore(ptyId: string): number | typeof RUNTIME_ANSWER_REFUSED {
    const runtime = this.#core.runtime
    if (runtime.getPtyOutputSequence === undefined) return 0
    let answer: unknown
    try {
      answer = runtime.getPtyOutputSequence(ptyId) ?? 0
    } catch (error) {
      this.#core.report('bookkeeping_failed', 'The runtime threw from getPtyOutputSequence', error, ptyId)
      return RUNTIME_ANSWER_REFUSED
    }
    // Why checked: the record's sequence is what every data event's `seq` counts on from ("x5", NaN).
    if (isOutputSequence(answer)) return answer
    this.#core.report('bookkeeping_failed', malformedSequenceAnswer('getPtyOutputSequence', answer, ptyId), undefined, ptyId)
    return RUNTIME_ANSWER_REFUSED
  }

  /**
   * The runtime's output sequence of a PTY the pipeline just committed, or an attach just attached:
   * {@link Bookkeeping.sequenceBefore}'s read, a refused answer (reported) read as 0 — the PTY is
   * running and registered, and failing its spawn would leave it untracked.
   */
  runtimeOutputSequence(ptyId: string): number {
    const sequence = this.sequenceBefore(ptyId)
    return sequence === RUNTIME_ANSWER_REFUSED ? 0 : sequence
  }

  /**
   * An attach's sequence rebase (the pipeline's stage 11, the same rule): the reconciled sequence;
   * `null` when the runtime refused the provider's numbers (or has no hook); `undefined` when the
   * reply carries no provider sequence; {@link RUNTIME_ANSWER_REFUSED} when the runtime threw, or answered
   * neither `null` nor a sequence (a finite number ≥ 0) — reported as `bookkeeping_failed`, naming
   * the hook and showing the answer, and the rebase undone (`undoPtyOutputSequenceSync`).
   */
  rebaseAttached(result: PtySpawnResult, sequenceBefore: number): number | null | undefined | typeof RUNTIME_ANSWER_REFUSED {
    if (result.providerSequence === undefined) return undefined
    if (this.#core.runtime.synchronizePtyOutputSequenceFromProvider === undefined) return null
    return this.#rebase(result.id, result.providerSequence, sequenceBefore)
  }

  /**
   * The runtime's sequence rebase, checked as the pipeline's stage 11 checks it: the reconciled
   * sequence or `null`; {@link RUNTIME_ANSWER_REFUSED} when it threw, or answered anything else (reported
   * as `bookkeeping_failed`, and the rebase undone).
   */
  #rebase(ptyId: string, providerSequence: ProviderSequence, sequenceBefore: number): number | null | typeof RUNTIME_ANSWER_REFUSED {
    const runtime = this.#core.runtime
    let answer: unknown
    try {
      answer = runtime.synchronizePtyOutputSequenceFromProvider?.(ptyId, providerSequence, sequenceBefore) ?? null
    } catch (error) {
      this.#core.report('bookkeeping_failed', 'The runtime threw from synchronizePtyOutputSequenceFromProvider', error, ptyId)
      return RUNTIME_ANSWER_REFUSED
    }
    if (answer === null || isOutputSequence(answer)) return answer
    // Why undone: the runtime may have applied the rebase it answered for (the pipeline undoes it too).
    this.#guarded('The runtime threw from undoPtyOutputSequenceSync', ptyId, () => runtime.undoPtyOutputSequenceSync?.(ptyId))
    this.#core.report('bookkeeping_failed', malformedSequenceAnswer('synchronizePtyOutputSequenceFromProvider', answer, ptyId), undefined, ptyId)
    return RUNTIME_ANSWER_REFUSED
  }

  /** Release the PTY's claim (of `generation`, when given). */
  releaseClaim(ptyId: string, generation: string | undefined): void {
    this.#guarded('The claim registry threw from release', ptyId, () => this.#core.options.claims.release(ptyId, generation))
  }

  /** Retire `expected` as the slot's owner; the store may answer asynchronously. */
  retireSlot(slot: PtySlot, expected: PtySlotOwner): void {
    this.#guarded('The slot store threw from retireOwner', expected.ptyId, () => {
      void Promise.resolve(this.#core.options.store.retireOwner(slot, expected)).catch((error: unknown) => {
        this.#core.report('bookkeeping_failed', 'The slot store rejected retireOwner', error, expected.ptyId)
      })
    })
  }

  #guarded(failure: string, ptyId: string, call: () => void): void {
    try {
      call()
    } catch (error) {
      this.#core.report('bookkeeping_failed', failure, error, ptyId)
    }
  }
}
