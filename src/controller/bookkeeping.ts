import type { PtyIncarnationId, PtySlot } from '../contracts/index.js'
import type { PtySlotOwner } from '../spawn/index.js'
import type { ControllerCore } from './controller-core.js'

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
