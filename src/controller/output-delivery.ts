import type { PtyProvider } from '../contracts/index.js'
import { isOutputSequence, malformedSequenceAnswer } from '../spawn/output-sequence-answer.js'
import { reportProviderGone, type ControllerCore } from './controller-core.js'
import type { ProducerFlowState } from './flow-control.js'
import { OutputBatcher, type OutputChunk } from './output-batching.js'
import { ProviderFlowTarget } from './provider-flow-target.js'
import type { PtyRecord } from './pty-record.js'

/**
 * A live PTY's output on its way out: the output sequence (`seq`), the `data` (or `bytes`) event,
 * the producer flow-control accounting around it (count, acknowledge, pause/resume the provider),
 * and the optional `dataBatchMs` coalescing. Every count is in the unit the PTY delivers: chars of
 * text, or bytes for a bytes-mode provider.
 */
export class OutputDelivery {
  readonly #core: ControllerCore
  readonly #batcher: OutputBatcher | null
  /**
   * The incarnations whose runtime `notePtyOutput` failed (threw, or answered no sequence) and was
   * reported: once per incarnation, not per chunk — a runtime that always fails would otherwise
   * report every chunk (~235 per MB), an error storm the host cannot act on more than once.
   */
  readonly #countFailureReported = new WeakSet<PtyRecord>()

  constructor(core: ControllerCore) {
    this.#core = core
    const windowMs = core.options.dataBatchMs
    this.#batcher =
      windowMs > 0
        ? new OutputBatcher(
            windowMs,
            core.timers,
            (record, chunk, seq) => this.#publish(record, chunk, seq),
            (record, chunk, seq) => this.#publishWindow(record, chunk, seq),
          )
        : null
  }

  /** Count a chunk of a live record's output and publish it (or batch it). Runs per output chunk. */
  deliver(record: PtyRecord, data: OutputChunk): void {
    const core = this.#core
    const seq = this.#advance(record, data.length)
    // Counted before delivery, so a listener that acknowledges the chunk it is handed is credited
    // for it; a listener that stops the PTY releases this count again.
    const flow = core.flow !== null && record.state === 'live' && !record.stopRequested && hasFlowControl(record.provider) ? core.flow : null
    const overHighWatermark = flow !== null && flow.countOutput(record.flowTarget, data.length)
    if (this.#batcher === null) this.#publish(record, data, seq)
    else this.#batcher.push(record, data, seq)
    // Paused after delivery: what the provider reports from inside its pause (an exit, output it
    // had read) comes after this chunk. Not once a listener ended or stopped the PTY (nor when its
    // ack brought the count back under the watermark: that is looked at again).
    if (overHighWatermark && record.state === 'live' && !record.stopRequested) flow.pauseIfOverHighWatermark(record.flowTarget)
  }

  /**
   * `lost` chars (bytes) of a live record's output went by undelivered (its provider reported the
   * gap): publish what is batched, move the sequence past the gap, and emit `outputLoss`. Nothing
   * is owed to flow control for output nobody was handed.
   */
  skip(record: PtyRecord, lost: number): void {
    this.flush(record)
    const fromSeq = record.outputSequence
    const toSeq = this.#advance(record, lost)
    if (!this.#core.listens('outputLoss')) return
    const incarnationId = record.incarnationId
    this.#core.emit(
      'outputLoss',
      incarnationId === undefined
        ? { ptyId: record.ptyId, hostId: record.hostId, fromSeq, toSeq }
        : { ptyId: record.ptyId, incarnationId, hostId: record.hostId, fromSeq, toSeq },
    )
  }

  /** Count `chars` more of the record's output (through the runtime's `notePtyOutput` when it has one); returns the new sequence. */
  #advance(record: PtyRecord, chars: number): number {
    const core = this.#core
    const counted = record.outputSequence + chars
    const note = core.runtime.notePtyOutput
    let seq = counted
    if (note !== undefined) {
      try {
        const answer: unknown = note.call(core.runtime, record.ptyId, chars)
        // Why checked: trusted, an answer of "x" or NaN became the PTY's sequence, and every later
        // data event's `seq` was built on it ("x5", NaN). Counted here instead, as without the hook.
        if (isOutputSequence(answer)) seq = answer
        else this.#reportCountFailure(record, malformedSequenceAnswer('notePtyOutput', answer), undefined)
      } catch (error) {
        this.#reportCountFailure(record, 'The runtime threw from notePtyOutput', error)
      }
    }
    record.outputSequence = seq
    return seq
  }

  /** Report a failed `notePtyOutput` (`bookkeeping_failed`), once per incarnation (see `#countFailureReported`). */
  #reportCountFailure(record: PtyRecord, message: string, cause: unknown): void {
    if (this.#countFailureReported.has(record)) return
    this.#countFailureReported.add(record)
    this.#core.report('bookkeeping_failed', `${message} (reported once for this PTY: the controller counts its output itself while the runtime fails)`, cause, record.ptyId)
  }

  /**
   * Publish the output `record` holds back for coalescing, at once: call before publishing its
   * exit (or superseding it), so no output follows its exit.
   */
  flush(record: PtyRecord): void {
    this.#batcher?.flush(record)
  }

  /** Publish every PTY's held output (dispose). */
  flushAll(): void {
    this.#batcher?.flushAll()
  }

  /**
   * Publish a coalesced window: one delivery of the PTY's events (`delivery-gate.ts`), so an exit a
   * listener of it causes (a `kill` on a provider that reports the exit from inside `shutdown`)
   * reaches every listener after this output.
   */
  #publishWindow(record: PtyRecord, chunk: OutputChunk, seq: number): void {
    this.#core.delivery.within(record.ptyId, () => this.#publish(record, chunk, seq))
  }

  #publish(record: PtyRecord, chunk: OutputChunk, seq: number): void {
    // Built without a spread: this runs per output chunk. The host is the record's own field (no
    // lookup by id per chunk).
    const incarnationId = record.incarnationId
    const hostId = record.hostId
    if (typeof chunk === 'string') {
      this.#core.emit(
        'data',
        incarnationId === undefined ? { ptyId: record.ptyId, hostId, data: chunk, seq } : { ptyId: record.ptyId, incarnationId, hostId, data: chunk, seq },
      )
    } else {
      this.#core.emit(
        'bytes',
        incarnationId === undefined ? { ptyId: record.ptyId, hostId, bytes: chunk, seq } : { ptyId: record.ptyId, incarnationId, hostId, bytes: chunk, seq },
      )
    }
  }

  /**
   * A consumer that sees `record`'s output only from now on begins to acknowledge, owing `owed` of
   * what went by (see `ProducerFlowControl.engageFromNow`).
   */
  acknowledgeFromNow(record: PtyRecord, owed: number): void {
    if (this.#core.flow !== null && hasFlowControl(record.provider)) this.#core.flow.engageFromNow(record.flowTarget, owed)
  }

  /** The last `output()` iterator of `record`'s terminal finished (see `ProducerFlowControl.iteratorsLeft`). */
  iteratorsLeft(record: PtyRecord): void {
    if (this.#core.flow !== null && hasFlowControl(record.provider)) this.#core.flow.iteratorsLeft(record.flowTarget)
  }

  /**
   * The consumer processed `chars` more chars: credit them (never below zero), which may resume a
   * paused producer, and forward the credit to the provider's own `acknowledgeData`. `byIterator`:
   * an `output()` iterator's ack, not the consumer's own call.
   */
  acknowledge(record: PtyRecord, chars: number, byIterator = false, dropped = false): void {
    const flow = this.#core.flow
    // Without producer flow control there is no count to clamp against: forward the ack as given.
    const credited = flow !== null && hasFlowControl(record.provider) ? flow.acknowledge(record.flowTarget, chars, byIterator, dropped) : chars
    if (credited > 0 && record.provider.acknowledgeData !== undefined) {
      try {
        record.provider.acknowledgeData(record.ptyId, credited)
      } catch (error) {
        // A disposed (or detached) provider's refusal: once for the provider, not per acknowledgement.
        if (reportProviderGone(this.#core, record.provider, 'flow_control_failed', error) === null) this.#core.report('flow_control_failed', `Provider ${record.provider.name} threw from acknowledgeData`, error, record.ptyId)
      }
    }
  }

  /** The record's flow-control state; `null` when flow control is off. */
  state(record: PtyRecord): ProducerFlowState | null {
    return this.#core.flow === null ? null : this.#core.flow.state(record.flowTarget)
  }

  /**
   * Why release flow control when a stop is requested: a paused producer holds the output that
   * must drain before the exit can be delivered, so keeping it paused would delay (or, with a
   * wedged consumer, prevent) the very confirmation the stop waits for.
   */
  releaseForStop(record: PtyRecord): void {
    this.#core.flow?.release(record.flowTarget)
  }

  /** The flow-control identity of a new incarnation: how to pause and resume its producer. */
  targetFor(provider: PtyProvider, ptyId: string): PtyRecord['flowTarget'] {
    return new ProviderFlowTarget(this.#core, provider, ptyId)
  }

  /**
   * A record was just committed: flow control follows its producer from now on, before its first
   * output (see `ProducerFlowControl.track`: off the first chunk's path). Its end releases it
   * (`releaseForStop`, the exit's publication, a supersede, dispose).
   */
  follow(record: PtyRecord): void {
    if (this.#core.flow !== null && hasFlowControl(record.provider)) this.#core.flow.track(record.flowTarget)
  }
}

function hasFlowControl(provider: PtyProvider): boolean {
  return typeof provider.pauseProducer === 'function' && typeof provider.resumeProducer === 'function'
}
