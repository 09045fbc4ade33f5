import type { PtyBytesEvent, PtyDataEvent, PtyExitEvent, PtyIncarnationId, PtyOutputLossEvent, PtyProvider, Unsubscribe } from '../contracts/index.js'
import { describeThrownValue, describeValue } from '../contracts/describe-value.js'
import type { Bookkeeping } from './bookkeeping.js'
import type { ControllerCore } from './controller-core.js'
import type { DeliveryGate } from './delivery-gate.js'
import type { ExitPublication } from './exit-publication.js'
import {
  IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS,
  InFlightEventBuffer,
  type DroppedOutput,
  type HeldProviderEvent,
  type InFlightSpawn,
} from './in-flight-event-buffer.js'
import type { OutputDelivery } from './output-delivery.js'
import { eventBelongsTo, type PtyRecord } from './pty-record.js'

/**
 * Where provider events enter the controller: the subscriptions to every provider, the
 * incarnation fence (an event reaches only the record of its provider and incarnation), and the
 * buffer that holds events for spawns still in flight until they publish.
 */
export class ProviderIntake {
  readonly #core: ControllerCore
  readonly #output: OutputDelivery
  readonly #exits: ExitPublication
  readonly #bookkeeping: Bookkeeping
  readonly #held: InFlightEventBuffer
  /** One PTY's events in order when a listener re-enters (see `delivery-gate.ts`). */
  readonly #gate: DeliveryGate<HeldProviderEvent>
  readonly #unsubscribes: Unsubscribe[] = []
  /**
   * What the listeners handed to the providers reach this intake (and so the whole controller)
   * through; emptied at {@link ProviderIntake.close}. Why not `this` in each listener: a provider
   * may keep a listener after it was unsubscribed (the fake's call log keeps every argument; a
   * host's provider may too), and one kept listener then kept the disposed controller alive, with
   * every record, handle and buffer it had — one controller per test over a shared fake provider
   * grew the heap by ~34 KB a test (220 MB after 6 000 tests).
   */
  readonly #link: { intake: ProviderIntake | undefined } = { intake: this }
  /** The malformed-event kinds already reported, per provider (`data.data`, `exit.id` …). */
  readonly #malformedReported = new WeakMap<PtyProvider, Set<string>>()

  constructor(core: ControllerCore, output: OutputDelivery, exits: ExitPublication, bookkeeping: Bookkeeping) {
    this.#core = core
    this.#output = output
    this.#exits = exits
    this.#bookkeeping = bookkeeping
    this.#gate = core.delivery
    this.#gate.setHandler((held) => this.#handleDeferred(held))
    this.#held = new InFlightEventBuffer(
      IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS,
      (event) =>
        core.report(
          'output_dropped',
          `Output held for spawns in flight passed ${IN_FLIGHT_OUTPUT_BUFFER_MAX_CHARS} chars; the oldest was dropped`,
          undefined,
          event.id,
        ),
      (held) => this.#onDiscarded(held),
    )
  }

  /**
   * Subscribe to every provider once. Why at construction: an exit that races a spawn reply must
   * reach `runtime.notePtyExit` before the pipeline's admission gate runs, or a dead PTY would be
   * published.
   */
  subscribe(): void {
    const subscribed = new Set<PtyProvider>()
    for (const [hostId, provider] of this.#core.options.providers) {
      if (subscribed.has(provider)) continue
      subscribed.add(provider)
      try {
        this.#subscribeTo(provider)
      } catch (error) {
        // The controller is not made: leave no listener of it on the providers subscribed so far.
        this.close()
        throw new TypeError(
          `Expected the provider of host ${JSON.stringify(hostId)} (${JSON.stringify(String(provider.name))}) to take the controller's listeners, but ${(error as Error).message}`,
          { cause: (error as Error).cause ?? error },
        )
      }
    }
  }

  /** Subscribe the controller's handlers to one provider's events. */
  #subscribeTo(provider: PtyProvider): void {
    // Why a try/catch per handler, not a shared guard: these run per output chunk; a closure
    // per event was avoidable garbage. Nothing ever throws back into the provider. Each handler
    // reaches the intake through `link`, never `this` (see `#link`).
    const link = this.#link
    this.#listen('onData', () =>
      provider.onData((event) => {
        const intake = link.intake
        if (intake === undefined) return
        try {
          intake.#onData(provider, event)
        } catch (error) {
          intake.#reportFailure(error)
        }
      }),
    )
    // A provider that can deliver bytes: its bytes-mode PTYs report output only there.
    if (typeof provider.onBytes === 'function') {
      this.#listen('onBytes', () =>
        provider.onBytes!((event) => {
          const intake = link.intake
          if (intake === undefined) return
          try {
            intake.#onBytes(provider, event)
          } catch (error) {
            intake.#reportFailure(error)
          }
        }),
      )
    }
    // A provider that can lose output on its way (the pty host over a dropped connection).
    if (typeof provider.onOutputLoss === 'function') {
      this.#listen('onOutputLoss', () =>
        provider.onOutputLoss!((event) => {
          const intake = link.intake
          if (intake === undefined) return
          try {
            intake.#onOutputLoss(provider, event)
          } catch (error) {
            intake.#reportFailure(error)
          }
        }),
      )
    }
    this.#listen('onExit', () =>
      provider.onExit((event) => {
        const intake = link.intake
        if (intake === undefined) return
        try {
          intake.#onExit(provider, event)
        } catch (error) {
          intake.#reportFailure(error)
        }
      }),
    )
  }

  /**
   * Subscribe through one of a provider's `on…` methods, and keep what it returned to call at
   * `close`: the `Unsubscribe` function the contract asks for — or, leniently, a disposable
   * (`{ dispose() }`, as VS Code's events return). Anything else would leave the controller's
   * listener on the provider for good: refused, as a throw is (an `Error` saying which method).
   */
  #listen(method: string, subscribe: () => unknown): void {
    let unsubscribe: unknown
    try {
      unsubscribe = subscribe()
    } catch (error) {
      throw new Error(`its ${method} threw ${describeThrownValue(error)}`, { cause: error })
    }
    if (typeof unsubscribe === 'function') this.#unsubscribes.push(unsubscribe as Unsubscribe)
    else if (typeof (unsubscribe as { dispose?: unknown } | null)?.dispose === 'function') this.#unsubscribes.push(() => (unsubscribe as { dispose(): void }).dispose())
    else throw new Error(`its ${method} returned ${describeValue(unsubscribe)}, not an unsubscribe function`)
  }

  /** Start holding events for a spawn in flight. */
  beginInFlight(): InFlightSpawn {
    return this.#held.begin()
  }

  /** The spawn in flight is over (published or failed); idempotent. */
  endInFlight(inFlight: InFlightSpawn): void {
    this.#held.end(inFlight.token)
  }

  /**
   * The held events of a just-published PTY: those that arrived since its spawn started (older
   * ones predate it) and belong to its incarnation (`eventBelongsTo`: an event naming another
   * incarnation, or none once the incarnation is known, stays held for a spawn that may publish it).
   */
  takeHeld(record: PtyRecord, since: number): HeldProviderEvent[] {
    return this.#held.take(record.provider, record.ptyId, since, (held) => eventBelongsTo(record, held.event.incarnationId))
  }

  /**
   * A re-attach revives `record` (its stop stood unverified): what is still held of its output
   * from before that re-attach began (held for other spawns in flight, which cannot claim it) went
   * by undelivered — counted now, with the rest of the gap the revival reports.
   */
  discardHeldBefore(record: PtyRecord): void {
    for (const held of this.takeHeld(record, 0)) this.#onDiscarded(held)
  }

  /**
   * Deliver taken events, right after the `spawn` event, as if they arrived now. `streamStart` is
   * where the spawn result's `providerSequence` placed the stream (in the provider's sequence): a
   * loss that ends there or before it lies before the stream (the placement counts it already).
   */
  deliverHeld(record: PtyRecord, events: readonly HeldProviderEvent[], streamStart: number | undefined): void {
    if (events.length === 0) return
    // Gated (unless the spawn's publication already is): an exit a listener of this output causes
    // comes after the rest of it.
    this.#gate.within(record.ptyId, () => {
      for (const entry of events) {
        if (entry.kind === 'data') this.#dataNow(entry.provider, entry.event, false)
        else if (entry.kind === 'bytes') this.#bytesNow(entry.provider, entry.event, false)
        else if (entry.kind === 'loss') {
          if (streamStart === undefined || entry.event.toSeq > streamStart) this.#lossNow(entry.provider, entry.event, false)
        } else if (entry.kind === 'dropped') this.#onDropped(entry.provider, entry.event)
        else this.#routeExit(entry.provider, entry.event, false)
      }
    })
  }

  /** A provider event deferred while its PTY's delivery was under way: handled as if it arrived now. */
  #handleDeferred(held: HeldProviderEvent): void {
    try {
      if (held.kind === 'data') this.#dataNow(held.provider, held.event, true)
      else if (held.kind === 'bytes') this.#bytesNow(held.provider, held.event, true)
      else if (held.kind === 'loss') this.#lossNow(held.provider, held.event, true)
      else if (held.kind === 'exit') this.#routeExit(held.provider, held.event, true)
    } catch (error) {
      this.#reportFailure(error)
    }
  }

  /** Unsubscribe from every provider and drop what is held (disposal). */
  close(): void {
    // Nothing a provider kept of this controller's listeners reaches it any more (see `#link`).
    this.#link.intake = undefined
    for (const unsubscribe of this.#unsubscribes.splice(0)) {
      try {
        unsubscribe()
      } catch {
        // Why: an unsubscribe that throws must not keep the rest subscribed.
      }
    }
    this.#held.clear()
  }

  #onData(provider: PtyProvider, event: PtyDataEvent): void {
    if (typeof event !== 'object' || event === null || typeof event.id !== 'string' || typeof event.data !== 'string') {
      this.#reportMalformed(provider, 'data', event, 'data', 'a string')
      return
    }
    // Why inline, not through a helper taking a callback: this runs per output chunk.
    const gate = this.#gate
    if (gate.busy(event.id)) return gate.defer(event.id, { kind: 'data', provider, event })
    const entered = gate.enter(event.id)
    try {
      this.#dataNow(provider, event, true)
    } finally {
      if (entered) gate.leave(event.id)
    }
  }

  #dataNow(provider: PtyProvider, event: PtyDataEvent, allowBuffer: boolean): void {
    if (this.#deliverToLive(provider, event.id, event.incarnationId, event.data)) return
    // Output for an id whose spawn may still be in flight: hold it until the spawn publishes.
    if (allowBuffer && this.#held.holding) this.#held.hold({ kind: 'data', provider, event })
    else this.#noteUndelivered(provider, event.id, event.incarnationId, event.data.length)
  }

  #onBytes(provider: PtyProvider, event: PtyBytesEvent): void {
    if (typeof event !== 'object' || event === null || typeof event.id !== 'string' || !(event.bytes instanceof Uint8Array)) {
      this.#reportMalformed(provider, 'bytes', event, 'bytes', 'a Uint8Array')
      return
    }
    const gate = this.#gate
    if (gate.busy(event.id)) return gate.defer(event.id, { kind: 'bytes', provider, event })
    const entered = gate.enter(event.id)
    try {
      this.#bytesNow(provider, event, true)
    } finally {
      if (entered) gate.leave(event.id)
    }
  }

  #bytesNow(provider: PtyProvider, event: PtyBytesEvent, allowBuffer: boolean): void {
    if (this.#deliverToLive(provider, event.id, event.incarnationId, event.bytes)) return
    if (allowBuffer && this.#held.holding) this.#held.hold({ kind: 'bytes', provider, event })
    else this.#noteUndelivered(provider, event.id, event.incarnationId, event.bytes.length)
  }

  /**
   * Deliver output to the live record it belongs to. Returns `true` when it was handled (delivered,
   * or dropped as output of an incarnation whose exit is proven), `false` when it may belong to a
   * spawn still in flight — or to an incarnation whose stop is unverified, which a re-attach in
   * flight may revive (held for it, or else counted: {@link ProviderIntake.#noteUndelivered}).
   */
  #deliverToLive(provider: PtyProvider, id: string, incarnationId: PtyIncarnationId | undefined, chunk: string | Uint8Array): boolean {
    const record = this.#core.records.get(id)
    if (record === undefined || record.provider !== provider || !eventBelongsTo(record, incarnationId)) return false
    if (record.state === 'live') {
      this.#output.deliver(record, chunk)
      return true
    }
    // Output attributed to the ended incarnation itself is dropped: nothing follows a proven exit.
    return record.state === 'exited' && incarnationId !== undefined && incarnationId === record.incarnationId
  }

  /**
   * Output (or a gap) that reached no record and that no spawn in flight holds. For an incarnation
   * whose stop went unverified it is counted: its process may be alive, and a re-attach that
   * revives it reports the count as a gap, so its sequence keeps matching its provider's. Anything
   * else is not this controller's to count (a PTY it never tracked, an exit that is proven).
   */
  #noteUndelivered(provider: PtyProvider, id: string, incarnationId: PtyIncarnationId | undefined, chars: number): void {
    const record = this.#core.records.get(id)
    if (record === undefined || record.state !== 'unverified' || record.provider !== provider || !eventBelongsTo(record, incarnationId)) return
    record.charsDroppedWhileUnverified += chars
  }

  /** A held event (or drop mark) that no spawn claimed: see {@link ProviderIntake.#noteUndelivered}. */
  #onDiscarded(held: HeldProviderEvent): void {
    const { provider, event } = held
    if (held.kind === 'data') this.#noteUndelivered(provider, event.id, event.incarnationId, held.event.data.length)
    else if (held.kind === 'bytes') this.#noteUndelivered(provider, event.id, event.incarnationId, held.event.bytes.length)
    else if (held.kind === 'dropped') this.#noteUndelivered(provider, event.id, event.incarnationId, held.event.chars)
    else if (held.kind === 'loss') this.#noteUndelivered(provider, event.id, event.incarnationId, held.event.toSeq - held.event.fromSeq)
  }

  /** Output the in-flight cap dropped, now claimed by a published spawn: a gap in its sequence. */
  #onDropped(provider: PtyProvider, dropped: DroppedOutput): void {
    const record = this.#core.records.get(dropped.id)
    if (record !== undefined && record.state === 'live' && record.provider === provider && eventBelongsTo(record, dropped.incarnationId)) {
      this.#output.skip(record, dropped.chars)
      return
    }
    this.#noteUndelivered(provider, dropped.id, dropped.incarnationId, dropped.chars)
  }

  /**
   * A gap in a live record's output moves its sequence on. For an id whose spawn may still be in
   * flight it is held with the output around it and delivered in order when the spawn publishes
   * (unless it lies before where the spawn result placed the stream); after a proven exit nothing
   * follows; while a stop is unverified it is held or counted as output is.
   */
  #onOutputLoss(provider: PtyProvider, event: PtyOutputLossEvent): void {
    if (typeof event !== 'object' || event === null || typeof event.id !== 'string') {
      this.#reportMalformed(provider, 'outputLoss', event)
      return
    }
    const { fromSeq, toSeq } = event
    // A malformed range is dropped, as any malformed provider event is.
    if (!Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(toSeq) || fromSeq < 0 || toSeq <= fromSeq) {
      this.#reportMalformed(provider, 'outputLoss', event, 'range', 'safe integers with 0 <= fromSeq < toSeq', { fromSeq, toSeq })
      return
    }
    const gate = this.#gate
    if (gate.busy(event.id)) return gate.defer(event.id, { kind: 'loss', provider, event })
    gate.within(event.id, () => this.#lossNow(provider, event, true))
  }

  #lossNow(provider: PtyProvider, event: PtyOutputLossEvent, allowBuffer: boolean): void {
    const { fromSeq, toSeq } = event
    const record = this.#core.records.get(event.id)
    if (record !== undefined && record.provider === provider && eventBelongsTo(record, event.incarnationId)) {
      if (record.state === 'live') {
        this.#output.skip(record, toSeq - fromSeq)
        return
      }
      if (record.state === 'exited' && event.incarnationId !== undefined && event.incarnationId === record.incarnationId) return
    }
    if (allowBuffer && this.#held.holding) this.#held.hold({ kind: 'loss', provider, event })
    else this.#noteUndelivered(provider, event.id, event.incarnationId, toSeq - fromSeq)
  }

  #onExit(provider: PtyProvider, event: PtyExitEvent): void {
    if (typeof event !== 'object' || event === null || typeof event.id !== 'string') {
      this.#reportMalformed(provider, 'exit', event)
      return
    }
    // Why first: the runtime's early-exit fence must see the exit before a racing spawn is admitted.
    this.#bookkeeping.noteRuntimeExit(event.id, event.incarnationId)
    const gate = this.#gate
    if (gate.busy(event.id)) return gate.defer(event.id, { kind: 'exit', provider, event })
    gate.within(event.id, () => this.#routeExit(provider, event, true))
  }

  /**
   * A provider event the controller cannot read was dropped: say so on `error`
   * (`provider_event_malformed`), naming the provider, the event and what was wrong — once per
   * provider, event and field, since a provider that emits, say, `Buffer` chunks would otherwise
   * report every chunk. Without it a third-party provider's output or exits vanished in silence.
   * `field` and `expected` describe the payload; the `id` (a non-empty string) and the event
   * object itself are checked first.
   */
  #reportMalformed(provider: PtyProvider, kind: string, event: unknown, field?: string, expected?: string, value?: unknown): void {
    const record = event as { id?: unknown } | null
    let what: string
    let key: string
    if (typeof event !== 'object' || event === null) {
      key = 'event'
      what = `that is ${describeValue(event)}, not an event object`
    } else if (typeof record?.id !== 'string' || record.id.length === 0) {
      key = 'id'
      what = `whose id is ${describeValue(record?.id)}, not a non-empty string`
    } else {
      key = field ?? 'event'
      what = `whose ${key} is ${describeValue(value ?? (event as Record<string, unknown>)[key])}, not ${expected}`
    }
    let reported = this.#malformedReported.get(provider)
    if (reported === undefined) this.#malformedReported.set(provider, (reported = new Set()))
    if (reported.has(`${kind}.${key}`)) return
    reported.add(`${kind}.${key}`)
    const ptyId = typeof record?.id === 'string' ? record.id : undefined
    this.#core.report(
      'provider_event_malformed',
      `Provider ${provider.name} emitted ${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind} event ${what}; it was dropped (reported once per provider, event and field)`,
      undefined,
      ptyId,
    )
  }

  #routeExit(provider: PtyProvider, event: PtyExitEvent, allowBuffer: boolean): void {
    const record = this.#core.records.get(event.id)
    if (record !== undefined && record.provider === provider && eventBelongsTo(record, event.incarnationId)) {
      if (record.state === 'live') {
        this.#exits.settleProviderExit(record, event)
        return
      }
      if (record.state === 'unverified') {
        this.#exits.settleLateExit(record, event)
        return
      }
      if (event.incarnationId !== undefined && event.incarnationId === record.incarnationId) return
    }
    if (allowBuffer) this.#held.hold({ kind: 'exit', provider, event })
    // Otherwise: an exit of an older incarnation (R1), or of a PTY this controller never tracked.
  }

  /** Report a failure while handling a provider event: nothing ever throws back into the provider. */
  #reportFailure(error: unknown): void {
    this.#core.report('provider_threw', 'The controller failed while handling a provider event', error)
  }
}
