import type { EventEmitter } from 'node:events'
import { Bookkeeping } from './bookkeeping.js'
import type { ControllerCore, ControllerReport } from './controller-core.js'
import { resolvePtyControllerOptions, type PtyControllerOptions } from './controller-options.js'
import { ControllerTimers } from './controller-timers.js'
import { DeliveryGate } from './delivery-gate.js'
import { emitToEachListener, reportToErrorListeners } from './event-dispatch.js'
import { ExitPublication } from './exit-publication.js'
import { ProducerFlowControl } from './flow-control.js'
import { LivePtyQuestions } from './live-pty-questions.js'
import { OutputDelivery } from './output-delivery.js'
import { ProcessListings } from './process-listings.js'
import { ProviderIntake } from './provider-intake.js'
import { ProviderQueries } from './provider-queries.js'
import { PtyInput } from './pty-input.js'
import { PtyRecordTable } from './pty-record-table.js'
import { RendererSerializerRegistry } from './renderer-serializers.js'
import { SlotCreateGate } from './slot-adoption.js'
import { SpawnPublication } from './spawn-publication.js'
import { Stopping } from './stopping.js'

/** The modules one `PtyController` delegates to, each owning one responsibility (docs/controller.md). */
export type ControllerModules = {
  readonly core: ControllerCore
  readonly output: OutputDelivery
  readonly intake: ProviderIntake
  readonly stopping: Stopping
  readonly spawns: SpawnPublication
  readonly input: PtyInput
  readonly queries: ProviderQueries
  readonly questions: LivePtyQuestions
  readonly listings: ProcessListings
  readonly slotGate: SlotCreateGate
  readonly renderers: RendererSerializerRegistry
}

/**
 * Resolve the options and wire the controller's modules around one {@link ControllerCore}, which
 * publishes through `emitter` (the facade itself). Subscribes to every provider at once, so an
 * exit that races the first spawn's reply is seen (docs/controller.md, Setup).
 *
 * @throws TypeError naming the option when the options are malformed.
 */
export function assembleController(options: PtyControllerOptions, emitter: EventEmitter, disposed: () => boolean): ControllerModules {
  const resolved = resolvePtyControllerOptions(options)
  const report: ControllerReport = (code, message, cause, ptyId) => reportToErrorListeners(emitter, code, message, cause, ptyId)
  const core: ControllerCore = {
    options: resolved,
    clock: resolved.clock,
    runtime: resolved.runtime,
    timers: new ControllerTimers(resolved.clock, (error) => report('provider_threw', 'The controller failed inside a timer', error)),
    flow: resolved.flowControl === null ? null : new ProducerFlowControl(resolved.flowControl, resolved.clock),
    records: new PtyRecordTable(),
    emit: (event, payload) => emitToEachListener(emitter, event, payload, report),
    delivery: new DeliveryGate(),
    listens: (event) => emitter.listenerCount(event) > 0,
    report,
    disposed,
    disposedProvidersReported: new WeakSet(),
    detachedProvidersReported: new WeakSet(),
  }
  const bookkeeping = new Bookkeeping(core)
  const output = new OutputDelivery(core)
  const exits = new ExitPublication(core, bookkeeping, output)
  const intake = new ProviderIntake(core, output, exits, bookkeeping)
  const stopping = new Stopping(core, exits, output)
  const modules: ControllerModules = {
    core,
    output,
    intake,
    stopping,
    spawns: new SpawnPublication(core, intake, exits, output, stopping, bookkeeping),
    input: new PtyInput(core),
    queries: new ProviderQueries(core, exits),
    questions: new LivePtyQuestions(core),
    listings: new ProcessListings(core, exits),
    slotGate: new SlotCreateGate(),
    renderers: new RendererSerializerRegistry((ms) => core.timers.after(ms)),
  }
  intake.subscribe()
  return modules
}

/**
 * What `dispose` does once every owned PTY's stop has settled (or, with `stopPtys: false`, at
 * once): send the output still held by `dataBatchMs`, unsubscribe from the providers, release flow
 * control, cancel the timers (whoever still waits gives up), end every slot wait. Why unsubscribe
 * before releasing flow control: a PTY left running resumes, and a provider may hand over what it
 * held back at once — noted, that output would pause the producer again and arm timers nobody
 * cancels.
 */
export function releaseController(modules: ControllerModules): void {
  modules.output.flushAll()
  modules.intake.close()
  modules.core.flow?.releaseAll()
  modules.core.timers.clearAll()
  modules.slotGate.close()
  modules.renderers.close()
}
