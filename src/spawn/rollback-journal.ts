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
    return await this.#run(() => true)
  }

  /** Run only the `always` steps in reverse order (success path). Returns the steps that threw. */
  async finish(): Promise<RollbackFailure[]> {
    return await this.#run((step) => step.always)
  }

  async #run(select: (step: RollbackStep) => boolean): Promise<RollbackFailure[]> {
    this.#closed = true
    const steps = this.#steps.filter(select).reverse()
    this.#steps = []
    const failures: RollbackFailure[] = []
    for (const step of steps) {
      try {
        await step.undo()
      } catch (error) {
        failures.push({ label: step.label, error })
      }
    }
    return failures
  }
}
