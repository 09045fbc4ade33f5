import type { PtyProvider } from '../contracts/index.js'
import { reportProviderGone, type ControllerCore } from './controller-core.js'
import type { ProducerFlowTarget } from './flow-control.js'

/**
 * The flow-control identity of one incarnation: pauses and resumes its producer through its
 * provider, and reports a consumer that stopped acknowledging.
 *
 * Why a class: every live PTY carries one for its whole life. As an object of three arrow
 * functions it cost three closures and their context per PTY (~0.3 KiB of heap, more when run
 * through `tsx`, whose `keepNames` gives each named closure a property array); its methods now
 * live once, on the prototype, and a PTY carries only the three fields below (issue 18).
 */
export class ProviderFlowTarget implements ProducerFlowTarget {
  readonly #core: ControllerCore
  readonly #provider: PtyProvider
  readonly #ptyId: string

  /**
   * @param core - the controller's core: where a provider that throws, or a consumer that stopped acknowledging, is reported
   * @param provider - the provider that owns the PTY
   * @param ptyId - the PTY
   */
  constructor(core: ControllerCore, provider: PtyProvider, ptyId: string) {
    this.#core = core
    this.#provider = provider
    this.#ptyId = ptyId
  }

  /** Ask the provider to stop reading the PTY (`pauseProducer`); never throws. */
  pause(): void {
    this.#call('pauseProducer')
  }

  /** Ask the provider to read the PTY again (`resumeProducer`); never throws. */
  resume(): void {
    this.#call('resumeProducer')
  }

  /** A pause was held for the maximum time without acknowledgements: report it. */
  notAcknowledging(): void {
    this.#core.report(
      'consumer_not_acknowledging',
      `PTY ${this.#ptyId}'s producer was paused for the maximum hold without its consumer acknowledging; ` +
        'the unacknowledged output was forgiven and the producer resumed',
      undefined,
      this.#ptyId,
    )
  }

  #call(method: 'pauseProducer' | 'resumeProducer'): void {
    try {
      this.#provider[method]?.(this.#ptyId)
    } catch (error) {
      // Why swallowed: flow control is an optimization riding the data path; it never stops delivery.
      // A disposed (or detached) provider's refusal: once for the provider, not per pause and resume.
      if (reportProviderGone(this.#core, this.#provider, 'flow_control_failed', error) !== null) return
      this.#core.report('flow_control_failed', `Provider ${this.#provider.name} threw from ${method}`, error, this.#ptyId)
    }
  }
}
