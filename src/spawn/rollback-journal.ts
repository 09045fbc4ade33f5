import { isPromiseLike } from '../contracts/promise-like.js'

/** An undo step recorded by a pipeline stage. */
export type RollbackStep = {
  /** A short name for diagnostics (`'release scope lease'`). */
  label: string
  /** Undo what the stage did. May be async; a throw or rejection is collected, never propagated. */
  undo: () => void | Promise<void>
  /**
   * Run this step on success too (a `finally` step: the scope lease, the admitted handle). Other
   * steps run only on a rollback.
   */
  always: boolean
}

/** An undo step that threw while the journal ran. */
export type RollbackFailure = {
  /** The step's label. */
  label: string
  /** What it threw. */
  error: unknown
}

/** The options of a step that also runs after a success (`record(label, undo, RUN_ALWAYS)`): one object, not one per step. */
export const RUN_ALWAYS = { always: true } as const

/**
 * The rollback journal of one pipeline run: every stage records how to undo itself as soon as its
 * side effect happened, and a failure anywhere later runs the undos in reverse order.
 *
 * Why a journal rather than one big `catch`: the stages are conditional (slot or claim, fresh or
 * re-attach, with or without each runtime hook), and a journal undoes exactly what happened, in the
 * reverse of the order it happened, without the catch block re-deriving which stages ran. Each undo
 * is guarded: one that throws does not stop the others; failures are returned for the caller to
 * attach to its error.
 */
export class RollbackJournal {
  #steps: RollbackStep[] = []
  #closed = false

  /**
   * Record an undo step. With `always`, it also runs when the journal is {@link RollbackJournal.finish}ed
   * after a success (a `finally` step).
   *
   * @throws TypeError when the journal already ran (a stage recorded an undo after the end).
   */
  record(label: string, undo: () => void | Promise<void>, options: { always?: boolean } = {}): void {
    if (this.#closed) {
      throw new TypeError(`Expected the rollback journal to be open when recording ${JSON.stringify(label)}, got a closed journal`)
    }
    this.#steps.push({ label, undo, always: options.always === true })
  }

  /** The labels of the recorded steps, oldest first (for diagnostics and tests). */
  labels(): string[] {
    return this.#steps.map((step) => step.label)
  }

  /** Run every step in reverse order (failure path). Returns the steps that threw. */
  async rollBack(): Promise<RollbackFailure[]> {
    return await this.#run(false)
  }

  /**
   * Run only the `always` steps in reverse order (success path). Returns the steps that threw: at
   * once when every `always` step is synchronous (the usual case: a lease release, an unsubscribe),
   * else a promise of them from the first step that answers with one (the rest then run after it,
   * in order).
   */
  finish(): RollbackFailure[] | Promise<RollbackFailure[]> {
    return this.#run(true)
  }

  // Why synchronous until an undo answers with a promise: the success path runs once per spawn,
  // and an `await` per synchronous step was a microtask turn each for nothing.
  #run(alwaysOnly: boolean): RollbackFailure[] | Promise<RollbackFailure[]> {
    this.#closed = true
    const steps = this.#steps
    this.#steps = []
    const failures: RollbackFailure[] = []
    for (let i = steps.length - 1; i >= 0; i--) {
      const step = steps[i] as RollbackStep
      if (alwaysOnly && !step.always) continue
      const pending = runUndo(step, failures)
      if (pending !== undefined) return this.#runAfter(pending, steps, i, alwaysOnly, failures)
    }
    return failures
  }

  /** The rest of {@link RollbackJournal.#run} once step `index` answered with a promise. */
  async #runAfter(
    pending: PromiseLike<void>,
    steps: readonly RollbackStep[],
    index: number,
    alwaysOnly: boolean,
    failures: RollbackFailure[],
  ): Promise<RollbackFailure[]> {
    await settleUndo(steps[index] as RollbackStep, pending, failures)
    for (let i = index - 1; i >= 0; i--) {
      const step = steps[i] as RollbackStep
      if (alwaysOnly && !step.always) continue
      const next = runUndo(step, failures)
      if (next !== undefined) await settleUndo(step, next, failures)
    }
    return failures
  }
}

/** Call one undo; a throw is collected. Returns the undo's promise when it answered with one. */
function runUndo(step: RollbackStep, failures: RollbackFailure[]): PromiseLike<void> | undefined {
  try {
    const result = step.undo()
    return isPromiseLike(result) ? result : undefined
  } catch (error) {
    failures.push({ label: step.label, error })
    return undefined
  }
}

async function settleUndo(step: RollbackStep, pending: PromiseLike<void>, failures: RollbackFailure[]): Promise<void> {
  try {
    await pending
  } catch (error) {
    failures.push({ label: step.label, error })
  }
}
