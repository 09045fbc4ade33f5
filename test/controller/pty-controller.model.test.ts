/**
 * Model-based test of the controller over the fake provider and a manual clock.
 *
 * The model keeps, per incarnation, the evidence the controller may use: whether a stop was
 * requested for it, and which exit its provider reported. Every event the controller emits is
 * checked against that evidence the moment it is emitted, and the model checks completeness and
 * flow-control caps after every command.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ExecutionHostId, PtyExitEvent, PtyIncarnationId } from '../../src/contracts/index.js'
import {
  PtyControllerDisposedError,
  STOP_UNCONFIRMED_AFTER_MS,
  createPtyController,
  type PtyController,
  type PtyControllerExitEvent,
} from '../../src/controller/index.js'
import {
  resolveProcessExitCause,
  resolveUnreportedExitCause,
  settleExitCause,
  type TerminalExitCause,
} from '../../src/exit-cause/index.js'
import { createInMemoryPtyRuntime, isPtySpawnError, type InMemoryPtyRuntime } from '../../src/spawn/index.js'
import { createFakePtyProvider, type FakePtyProvider, type FakeShutdownBehaviour } from '../../src/testing/index.js'
import { createManualClock, type ManualClock } from '../../src/testing/manual-clock.js'

const FLOW = { mode: 'always' as const, highWatermarkChars: 1_000, lowWatermarkChars: 100, pauseReassertIntervalMs: 50, pauseMaxHoldMs: 200 }
const MAX_PTY_IDS = 5

/** `stopAttested`: the provider attests a stop reached it before the death (`stopRequestedBeforeDeath`: another app's, an earlier run's). */
type ModelExit = { code: number; signal?: number; withoutCause?: boolean; hostReports?: boolean; stopAttested?: boolean }

type Incarnation = {
  ptyId: string
  incarnationId: PtyIncarnationId
  /** The host its `spawn` event named: every later event of it names the same one. */
  hostId: ExecutionHostId
  behaviour: FakeShutdownBehaviour
  spawnSaysNoStatus: boolean
  stopRequested: boolean
  /** When the first stop of this incarnation was requested (clock time). */
  stopRequestedAt: number | undefined
  /** The provider had reported the death (still unpublished) before the first stop request (issue 13.4). */
  diedBeforeStop?: boolean
  /** The exit the provider delivered for this incarnation (the evidence), once it did. */
  providerExit: ModelExit | null
  published: PtyControllerExitEvent | null
  provenDead: boolean
  /** A `stopAndWait` (or a stopping `dispose`) was asked of it: its own rules publish a doubt (both steps rejected: at once). */
  stopAndWaited?: boolean
}

type SpawnIntent = { behaviour: FakeShutdownBehaviour; spawnSaysNoStatus: boolean; scriptedExit: ModelExit | undefined }

type Model = {
  incarnations: Map<PtyIncarnationId, Incarnation>
  current: Map<string, PtyIncarnationId>
  ids: string[]
  requestedExits: Map<PtyIncarnationId, ModelExit>
  intent: SpawnIntent | undefined
  /** An `attach` is in flight: a re-attach `spawn` event may come (a revival). */
  reattaching: boolean
  emittingStale: boolean
  disposed: boolean
  /** `dispose()` stopped the PTYs (not `stopPtys: false`). */
  disposeStoppedPtys?: boolean
  violations: string[]
  /** Per incarnation, the output sequence of its last `data` or `outputLoss` event. */
  seqs: Map<PtyIncarnationId, number>
  /** Every `outputLoss` event's gap (`toSeq − fromSeq`), in order. */
  losses: number[]
  /** Per incarnation, the PTY id's output sequence when its `spawn` event was published: its stream starts there. */
  streamStarts: Map<PtyIncarnationId, number>
}

type Real = {
  provider: FakePtyProvider
  /** The controller's runtime: its `getPtyOutputSequence` is the `seq` the controller publishes. */
  runtime: InMemoryPtyRuntime
  clock: ManualClock
  controller: PtyController
  /** Per id: when the open producer pause began. */
  openPauses: Map<string, number>
  checkedCalls: number
}

function modelObserved(exit: ModelExit, spawnSaysNoStatus: boolean): TerminalExitCause {
  let observed: TerminalExitCause
  if (exit.withoutCause === true) {
    observed = resolveUnreportedExitCause(exit.code)
  } else {
    const hostReports = exit.hostReports ?? (spawnSaysNoStatus ? false : undefined)
    observed = resolveProcessExitCause({
      exitCode: exit.code,
      ...(exit.signal === undefined ? {} : { signal: exit.signal }),
      ...(hostReports === undefined ? {} : { hostReportsChildExitStatus: hostReports }),
    })
  }
  if (spawnSaysNoStatus && !(observed.kind === 'unknown' && observed.reason !== 'cause_unreported')) {
    return { kind: 'unknown', reason: 'host_status_unavailable' }
  }
  return observed
}

function exitFromEvent(event: PtyExitEvent): ModelExit {
  // A stop the fake confirmed: it reports code 0 with the stop's signal.
  const cause = event.cause
  return cause?.kind === 'signaled' ? { code: event.code, signal: cause.signal } : { code: event.code }
}

function requestStop(incarnation: Incarnation | undefined, real: Real, model: Model): void {
  if (incarnation === undefined) return
  const died = incarnation.providerExit !== null || model.requestedExits.has(incarnation.incarnationId)
  if (!incarnation.stopRequested && died && incarnation.published === null) incarnation.diedBeforeStop = true
  incarnation.stopRequested = true
  incarnation.stopRequestedAt ??= real.clock.now()
}

function isUnverifiedExit(event: PtyControllerExitEvent | null): boolean {
  return event !== null && event.code === -1 && event.cause.kind === 'unknown' && event.cause.reason === 'stop_unverified'
}

/**
 * The text a PTY's output holds at provider offset `from` on, `length` chars of it: the letters
 * a–z in turn, so any chunk lost, repeated, reordered or published at the wrong sequence shows.
 */
function outputAt(from: number, length: number): string {
  let text = ''
  for (let i = 0; i < length; i++) text += String.fromCharCode(97 + ((from + i) % 26))
  return text
}

/** Paths the runs reached, across every run of the property (so the test can tell it reached them). */
const reached = { exitsVerifiedByListing: 0 }

function violate(model: Model, message: string): void {
  model.violations.push(message)
}

function wire(model: Model, real: Real): void {
  const { provider, controller } = real
  controller.on('spawn', (event) => {
    const intent = model.intent
    const incarnationId = event.incarnationId
    if (incarnationId === undefined) return violate(model, `spawn without incarnation for ${event.ptyId}`)
    // One host here (the fake under `local`): a `spawn` naming any other is wrong.
    if (event.hostId !== 'local') violate(model, `spawn of ${incarnationId} names host ${String(event.hostId)}`)
    if (event.isReattach) {
      // Only an attach re-attaches here, and only an incarnation whose stop went unverified is
      // published again (a revival): it is live once more, and may exit for real later.
      const known = model.incarnations.get(incarnationId)
      if (!model.reattaching || known === undefined) return violate(model, `unexpected re-attach of ${incarnationId}`)
      if (!isUnverifiedExit(known.published)) return violate(model, `re-attach published ${incarnationId}, whose exit was ${JSON.stringify(known.published)}`)
      known.published = null
      // Its stop intent stays; a new stop request starts a new unconfirmed window.
      known.stopRequestedAt = undefined
      return
    }
    if (intent === undefined) return violate(model, `unexpected spawn event for ${event.ptyId}`)
    model.current.set(event.ptyId, incarnationId)
    model.streamStarts.set(incarnationId, real.runtime.getPtyOutputSequence(event.ptyId))
    if (!model.ids.includes(event.ptyId)) model.ids.push(event.ptyId)
    const known = model.incarnations.get(incarnationId)
    model.incarnations.set(incarnationId, {
      ptyId: event.ptyId,
      incarnationId,
      hostId: event.hostId,
      behaviour: intent.behaviour,
      spawnSaysNoStatus: intent.spawnSaysNoStatus,
      stopRequested: false,
      stopRequestedAt: undefined,
      providerExit: known?.providerExit ?? null,
      published: null,
      provenDead: false,
    })
  })
  controller.on('data', (event) => {
    const incarnation = event.incarnationId === undefined ? undefined : model.incarnations.get(event.incarnationId)
    if (incarnation === undefined) return violate(model, `data for unknown incarnation ${String(event.incarnationId)}`)
    if (event.hostId !== incarnation.hostId) violate(model, `data of ${incarnation.incarnationId} names host ${String(event.hostId)}, its spawn named ${incarnation.hostId}`)
    if (incarnation.published !== null) violate(model, `data after exit for ${incarnation.incarnationId}`)
    // The sequence runs on without a jump, except across an `outputLoss` (which moved it on).
    const last = model.seqs.get(incarnation.incarnationId)
    if (last !== undefined && event.seq !== last + event.data.length) violate(model, `data of ${incarnation.incarnationId} at seq ${event.seq} after ${last} + ${event.data.length}`)
    model.seqs.set(incarnation.incarnationId, event.seq)
    // The content: each chunk is the provider's output at its place in the incarnation's stream
    // (`DataCommand` writes `outputAt(producedChars, size)`; a loss moves `producedChars` on).
    const start = model.streamStarts.get(incarnation.incarnationId)
    if (start !== undefined) {
      const expected = outputAt(event.seq - event.data.length - start, event.data.length)
      if (event.data !== expected) violate(model, `data of ${incarnation.incarnationId} at seq ${event.seq} is ${JSON.stringify(event.data.slice(0, 30))}…, its provider wrote ${JSON.stringify(expected.slice(0, 30))}… there`)
    }
    if (model.current.get(event.ptyId) !== event.incarnationId) {
      violate(model, `data attributed to non-current incarnation ${incarnation.incarnationId}`)
    }
  })
  controller.on('outputLoss', (event) => {
    const incarnation = event.incarnationId === undefined ? undefined : model.incarnations.get(event.incarnationId)
    if (incarnation === undefined) return violate(model, `output loss for unknown incarnation ${String(event.incarnationId)}`)
    if (event.hostId !== incarnation.hostId) violate(model, `output loss of ${incarnation.incarnationId} names host ${String(event.hostId)}, its spawn named ${incarnation.hostId}`)
    if (incarnation.published !== null) violate(model, `output loss after exit for ${incarnation.incarnationId}`)
    const last = model.seqs.get(incarnation.incarnationId)
    if (last !== undefined && event.fromSeq !== last) violate(model, `output loss of ${incarnation.incarnationId} from ${event.fromSeq}, its sequence was ${last}`)
    if (event.toSeq <= event.fromSeq) violate(model, `empty output loss ${JSON.stringify(event)}`)
    model.seqs.set(incarnation.incarnationId, event.toSeq)
    model.losses.push(event.toSeq - event.fromSeq)
  })
  controller.on('exit', (event) => {
    const incarnation = event.incarnationId === undefined ? undefined : model.incarnations.get(event.incarnationId)
    if (incarnation === undefined) return violate(model, `exit for unknown incarnation ${String(event.incarnationId)}`)
    if (event.hostId !== incarnation.hostId) violate(model, `exit of ${incarnation.incarnationId} names host ${String(event.hostId)}, its spawn named ${incarnation.hostId}`)
    if (model.current.get(event.ptyId) !== event.incarnationId) {
      violate(model, `exit attributed to a replaced incarnation ${incarnation.incarnationId}`)
    }
    // A second exit only follows a synthetic stop_unverified, carrying the real cause (issue 11.9).
    const first = incarnation.published
    const afterSynthetic = isUnverifiedExit(first)
    if (first !== null && !(afterSynthetic && incarnation.providerExit !== null)) violate(model, `second exit for ${incarnation.incarnationId}`)
    incarnation.published = event
    // A `kill`'s stop that ran out of time (`time_out`: `shutdown_timeout`) may still land: without
    // the provider's own exit, it is published unverified only at the end of the unconfirmed window
    // its first stop opened.
    const since = incarnation.stopRequestedAt
    if (isUnverifiedExit(event) && first === null && incarnation.providerExit === null && incarnation.behaviour === 'time_out' && incarnation.stopAndWaited !== true && since !== undefined) {
      if (real.clock.now() - since < STOP_UNCONFIRMED_AFTER_MS) {
        violate(model, `the kill of ${incarnation.incarnationId}, whose stop ran out of time, was published stop_unverified ${real.clock.now() - since} ms after it, before its window's end`)
      }
    }
    const evidence = incarnation.providerExit
    if (evidence === null) {
      const unverified =
        event.code === -1 && event.cause.kind === 'unknown' && event.cause.reason === 'stop_unverified'
      const verifiedByListing =
        event.code === 0 &&
        event.cause.kind === 'operator_close' &&
        !(provider.getPty(event.ptyId)?.live === true && provider.getPty(event.ptyId)?.incarnationId === event.incarnationId)
      if (!incarnation.stopRequested || !(unverified || verifiedByListing)) {
        violate(model, `exit without provider evidence: ${JSON.stringify(event)} (stop requested: ${incarnation.stopRequested})`)
      }
      if (verifiedByListing) reached.exitsVerifiedByListing += 1
      return
    }
    // A death the provider saw before this controller's stop keeps its cause, whatever else it attests.
    const stopRequested = incarnation.diedBeforeStop !== true && (incarnation.stopRequested || evidence.stopAttested === true)
    const expected = settleExitCause(modelObserved(evidence, incarnation.spawnSaysNoStatus), { stopRequested })
    if (JSON.stringify(expected) !== JSON.stringify(event.cause) || event.code !== evidence.code) {
      violate(
        model,
        `exit ${JSON.stringify(event)} but the evidence ${JSON.stringify(evidence)} (stop requested: ${incarnation.stopRequested}) allows ${JSON.stringify(expected)}`,
      )
    }
  })
  controller.on('liveness', (event) => {
    const incarnation = event.incarnationId === undefined ? undefined : model.incarnations.get(event.incarnationId)
    if (incarnation === undefined) return violate(model, `liveness for unknown incarnation ${String(event.incarnationId)}`)
    if (event.hostId !== incarnation.hostId) violate(model, `liveness of ${incarnation.incarnationId} names host ${String(event.hostId)}, its spawn named ${incarnation.hostId}`)
    if (event.verdict.kind === 'exited') {
      const pty = provider.getPty(event.ptyId)
      if (pty?.live === true && pty.incarnationId === event.incarnationId) {
        violate(model, `liveness exited for a live process ${event.incarnationId}`)
      }
      incarnation.provenDead = true
    }
  })
  // Provider failures are expected here (scripted stops that fail); a check above that threw is a
  // violation — the controller reports a throwing listener as an error instead of throwing.
  controller.on('error', (error) => {
    if (error.code === 'listener_threw') violate(model, `a model check threw: ${String(error.cause)}`)
  })
}

function providerExitListener(model: Model): (event: PtyExitEvent) => void {
  return (event) => {
    if (model.emittingStale || event.incarnationId === undefined) return
    const requested = model.requestedExits.get(event.incarnationId)
    model.requestedExits.delete(event.incarnationId)
    const known = model.incarnations.get(event.incarnationId)
    const evidence =
      requested ?? (known === undefined ? model.intent?.scriptedExit : undefined) ?? exitFromEvent(event)
    if (known !== undefined) known.providerExit ??= evidence
    else {
      // The exit of a spawn still in flight: remembered for when (if) it is published.
      model.incarnations.set(event.incarnationId, {
        ptyId: event.id,
        incarnationId: event.incarnationId,
        hostId: 'local',
        behaviour: 'confirm',
        spawnSaysNoStatus: false,
        stopRequested: false,
        stopRequestedAt: undefined,
        providerExit: evidence,
        published: null,
        provenDead: false,
      })
    }
  }
}

async function settle(real: Real): Promise<void> {
  await real.provider.settle()
}

async function drive<T>(real: Real, promise: Promise<T>): Promise<T> {
  let done = false
  const tracked = promise.finally(() => {
    done = true
  })
  tracked.catch(() => undefined)
  for (let guard = 0; guard < 10_000; guard += 1) {
    await settle(real)
    if (done) return tracked
    const next = real.clock.nextTimerAt()
    if (next === null) throw new Error('drive(): stuck with no timer pending')
    real.clock.advance(Math.max(0, next - real.clock.now()))
  }
  throw new Error('drive(): gave up')
}

/** Invariants checked after every command. */
function checkAfterCommand(model: Model, real: Real): void {
  const { provider, clock } = real
  // Pauses: replay the provider's pause/resume calls; no pause may outlive the cap.
  const calls = provider.calls
  for (; real.checkedCalls < calls.length; real.checkedCalls += 1) {
    const call = calls[real.checkedCalls]
    if (call === undefined) continue
    const id = call.args[0] as string
    if (call.method === 'pauseProducer' && !real.openPauses.has(id)) real.openPauses.set(id, call.at)
    if (call.method === 'resumeProducer') {
      const since = real.openPauses.get(id)
      if (since !== undefined && call.at - since > FLOW.pauseMaxHoldMs) {
        violate(model, `pause of ${id} held ${call.at - since} ms`)
      }
      real.openPauses.delete(id)
    }
  }
  for (const [id, since] of real.openPauses) {
    if (clock.now() - since > FLOW.pauseMaxHoldMs) violate(model, `pause of ${id} open for ${clock.now() - since} ms`)
  }
  // After a dispose only what the dispose itself checked holds (nothing is published any more).
  if (model.disposed) return throwIfViolated(model)
  // Completeness: every exit the provider delivered for a current incarnation was published.
  for (const id of model.ids) {
    const incarnationId = model.current.get(id)
    const incarnation = incarnationId === undefined ? undefined : model.incarnations.get(incarnationId)
    const pty = provider.getPty(id)
    if (incarnation === undefined || pty === undefined || pty.incarnationId !== incarnationId) continue
    if (incarnation.providerExit !== null && !pty.live && pty.heldEventCount === 0 && incarnation.published === null) {
      violate(model, `the exit of ${incarnationId} was never published`)
    }
  }
  // A live incarnation's output sequence has moved on, since its stream started, by exactly its
  // provider's count of its output: every char was delivered or reported lost (a revival reports
  // what went by while its stop stood unverified). The sequence is the id's, continued across
  // respawns (a fresh spawn's `reset`), so each incarnation's stream starts where its spawn event
  // found it.
  for (const [ptyId, incarnationId] of model.current) {
    const incarnation = model.incarnations.get(incarnationId)
    const pty = provider.getPty(ptyId)
    const start = model.streamStarts.get(incarnationId)
    if (incarnation?.published !== null || pty?.incarnationId !== incarnationId || pty.heldEventCount > 0 || start === undefined) continue
    const seq = real.runtime.getPtyOutputSequence(ptyId)
    if (seq - start !== pty.producedChars) violate(model, `the output sequence of ${incarnationId} moved ${seq - start} from its start ${start}, its provider's count is ${pty.producedChars}`)
  }
  // A stop that nobody confirmed within the window is published as unverified.
  for (const incarnationId of model.current.values()) {
    const incarnation = model.incarnations.get(incarnationId)
    const since = incarnation?.stopRequestedAt
    if (incarnation?.published === null && since !== undefined && clock.now() - since >= STOP_UNCONFIRMED_AFTER_MS) {
      violate(model, `the stop of ${incarnationId} went unconfirmed for ${clock.now() - since} ms without an exit`)
    }
  }
  throwIfViolated(model)
}

function throwIfViolated(model: Model): void {
  if (model.violations.length > 0) throw new Error(model.violations.join('\n'))
}

type Command = fc.AsyncCommand<Model, Real>

abstract class BaseCommand implements Command {
  check(model: Readonly<Model>): boolean {
    return !model.disposed && model.ids.length > 0
  }
  abstract act(model: Model, real: Real): Promise<void>
  async run(model: Model, real: Real): Promise<void> {
    await this.act(model, real)
    await settle(real)
    checkAfterCommand(model, real)
  }
  abstract toString(): string
}

function pick(model: Model, index: number): { id: string; incarnation: Incarnation | undefined } {
  const id = model.ids[index % model.ids.length] as string
  const incarnationId = model.current.get(id)
  return { id, incarnation: incarnationId === undefined ? undefined : model.incarnations.get(incarnationId) }
}

class SpawnCommand extends BaseCommand {
  constructor(
    readonly behaviour: FakeShutdownBehaviour,
    readonly noStatus: boolean,
    readonly output: readonly string[],
    readonly scriptedExit: ModelExit | undefined,
    readonly exitBeforeReply: boolean,
    readonly reuseIndex: number | null,
  ) {
    super()
  }
  override check(model: Readonly<Model>): boolean {
    if (model.disposed) return false
    return this.reuseIndex === null ? model.ids.length < MAX_PTY_IDS : model.ids.length > 0
  }
  async act(model: Model, real: Real): Promise<void> {
    const reuseId = this.reuseIndex === null ? undefined : pick(model, this.reuseIndex).id
    if (reuseId !== undefined) real.openPauses.delete(reuseId)
    const exit = this.scriptedExit
    real.provider.scriptNextSpawn({
      ...(reuseId === undefined ? {} : { id: reuseId }),
      shutdown: this.behaviour,
      ...(this.noStatus ? { hostReportsChildExitStatus: false } : {}),
      ...(this.output.length > 0 ? { output: this.output } : {}),
      ...(exit === undefined
        ? {}
        : this.exitBeforeReply
          ? { exitBeforeReply: { exitCode: exit.code, ...(exit.signal === undefined ? {} : { signal: exit.signal }) } }
          : { exit: { exitCode: exit.code, ...(exit.signal === undefined ? {} : { signal: exit.signal }) } }),
    })
    model.intent = { behaviour: this.behaviour, spawnSaysNoStatus: this.noStatus, scriptedExit: exit }
    try {
      const reply = await real.controller.spawn({})
      if (model.current.get(reply.id) !== reply.incarnationId) violate(model, 'spawn reply does not match its spawn event')
      await settle(real)
    } catch (error) {
      if (!isPtySpawnError(error) || error.code !== 'exited_during_start') throw error
      if (exit === undefined) violate(model, `spawn without a scripted exit failed: ${String(error)}`)
    } finally {
      model.intent = undefined
    }
  }
  toString(): string {
    return `Spawn(${this.behaviour}, noStatus=${this.noStatus}, output=${this.output.length}, exit=${JSON.stringify(this.scriptedExit)}, beforeReply=${this.exitBeforeReply}, reuse=${String(this.reuseIndex)})`
  }
}

/** A write of text (`'x'`) or, when `bytes` is given, of raw bytes: accepted exactly while the PTY lives, and what the provider got ends with them. */
class WriteCommand extends BaseCommand {
  constructor(
    readonly index: number,
    readonly bytes: Uint8Array | null,
  ) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id, incarnation } = pick(model, this.index)
    const accepted = real.controller.write(id, this.bytes ?? 'x', 'driving')
    const pty = real.provider.getPty(id)
    if (accepted && (incarnation?.published !== null || pty?.live !== true || pty.incarnationId !== incarnation?.incarnationId)) {
      violate(model, `write to ${id} accepted after its exit`)
    }
    if (!accepted && incarnation?.published === null && pty?.live === true && pty.incarnationId === incarnation.incarnationId) {
      violate(model, `write to live ${id} refused`)
    }
    if (accepted && pty !== undefined) {
      const expected = this.bytes ?? new Uint8Array([0x78])
      const tail = pty.writtenBytes.subarray(pty.writtenBytes.length - expected.length)
      if (!Buffer.from(tail).equals(expected)) violate(model, `write of ${this.bytes === null ? 'text' : 'bytes'} to ${id} reached the provider as ${Buffer.from(tail).toString('hex')}`)
    }
  }
  toString(): string {
    return `Write(${this.index}${this.bytes === null ? '' : `, bytes ${Buffer.from(this.bytes).toString('hex')}`})`
  }
}

class ResizeCommand extends BaseCommand {
  constructor(
    readonly index: number,
    readonly cols: number,
    readonly rows: number,
  ) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id, incarnation } = pick(model, this.index)
    const resized = real.controller.resize(id, this.cols, this.rows)
    if (resized && incarnation?.published !== null) violate(model, `resize of exited ${id} succeeded`)
    if (resized) expect(real.controller.getSize(id)).toEqual({ cols: this.cols, rows: this.rows })
  }
  toString(): string {
    return `Resize(${this.index}, ${this.cols}x${this.rows})`
  }
}

class KillCommand extends BaseCommand {
  constructor(readonly index: number) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id, incarnation } = pick(model, this.index)
    requestStop(incarnation, real, model)
    const provenDeadBefore = incarnation?.provenDead ?? true
    const dispatched = real.controller.kill(id)
    if (dispatched !== !provenDeadBefore) {
      violate(model, `kill(${id}) returned ${dispatched}, proven dead before: ${String(provenDeadBefore)}`)
    }
  }
  toString(): string {
    return `Kill(${this.index})`
  }
}

class StopAndWaitCommand extends BaseCommand {
  constructor(
    readonly index: number,
    /** A duration (`timeoutMs`): the model's clock moves, so an absolute value would drift into the past. */
    readonly deadlineMs: number | undefined,
  ) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id, incarnation } = pick(model, this.index)
    requestStop(incarnation, real, model)
    if (incarnation !== undefined) incarnation.stopAndWaited = true
    const before = real.provider.getPty(id)
    // `confirm` reports the exit; `exit_unreported` ends the process unreported, and the listing proves it.
    const wasLiveAndConfirming =
      incarnation?.published === null &&
      (incarnation.behaviour === 'confirm' || incarnation.behaviour === 'exit_unreported') &&
      before?.live === true &&
      before.incarnationId === incarnation.incarnationId
    const verified = await drive(
      real,
      real.controller.stopAndWait(id, this.deadlineMs === undefined ? {} : { timeoutMs: this.deadlineMs }),
    )
    const after = real.provider.getPty(id)
    if (verified && after?.live === true && after.incarnationId === incarnation?.incarnationId) {
      violate(model, `stopAndWait(${id}) verified a live process`)
    }
    if (wasLiveAndConfirming && !verified) violate(model, `stopAndWait(${id}) of a confirming PTY was not verified`)
    if (verified && incarnation !== undefined && !incarnation.provenDead) {
      violate(model, `stopAndWait(${id}) verified without liveness exited`)
    }
  }
  toString(): string {
    return `StopAndWait(${this.index}, ${String(this.deadlineMs)})`
  }
}

class ProviderExitCommand extends BaseCommand {
  constructor(
    readonly index: number,
    readonly exit: ModelExit,
  ) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id } = pick(model, this.index)
    const pty = real.provider.getPty(id)
    if (pty === undefined || !pty.live) return
    model.requestedExits.set(pty.incarnationId, this.exit)
    real.provider.emitExit(id, {
      exitCode: this.exit.code,
      ...(this.exit.signal === undefined ? {} : { signal: this.exit.signal }),
      ...(this.exit.withoutCause === true ? { withoutCause: true } : {}),
      ...(this.exit.hostReports === undefined ? {} : { hostReportsChildExitStatus: this.exit.hostReports }),
      ...(this.exit.stopAttested === undefined ? {} : { stopRequestedBeforeDeath: this.exit.stopAttested }),
    })
  }
  toString(): string {
    return `ProviderExit(${this.index}, ${JSON.stringify(this.exit)})`
  }
}

class StaleExitCommand extends BaseCommand {
  constructor(readonly index: number) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id } = pick(model, this.index)
    const pty = real.provider.getPty(id)
    const older = pty?.incarnations.slice(0, -1).at(-1)
    if (older === undefined) return
    const exitsBefore = [...model.incarnations.values()].filter((incarnation) => incarnation.published !== null).length
    model.emittingStale = true
    try {
      real.provider.emitExit(id, { exitCode: 0, signal: 9, incarnationId: older })
    } finally {
      model.emittingStale = false
    }
    const exitsAfter = [...model.incarnations.values()].filter((incarnation) => incarnation.published !== null).length
    if (exitsAfter !== exitsBefore) violate(model, `a stale exit of ${older} was published`)
  }
  toString(): string {
    return `StaleExit(${this.index})`
  }
}

class ProbeCommand extends BaseCommand {
  constructor(readonly index: number) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id, incarnation } = pick(model, this.index)
    const probed = await real.controller.probePtyLiveness(id)
    const has = real.controller.hasPty(id)
    const pty = real.provider.getPty(id)
    const currentLive = pty?.live === true && pty.incarnationId === incarnation?.incarnationId
    if ((probed === false || has === false) && currentLive) violate(model, `${id} denied while live`)
    if (probed === true && pty?.live !== true) violate(model, `${id} probed live while gone`)
  }
  toString(): string {
    return `Probe(${this.index})`
  }
}

class DataCommand extends BaseCommand {
  constructor(
    readonly index: number,
    readonly size: number,
  ) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id } = pick(model, this.index)
    const pty = real.provider.getPty(id)
    if (pty?.live !== true) return
    real.provider.emitData(id, outputAt(pty.producedChars, this.size))
  }
  toString(): string {
    return `Data(${this.index}, ${this.size})`
  }
}

class LossCommand extends BaseCommand {
  constructor(
    readonly index: number,
    readonly chars: number,
  ) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id } = pick(model, this.index)
    const pty = real.provider.getPty(id)
    if (pty?.live !== true) return
    const incarnation = model.incarnations.get(pty.incarnationId)
    // Reported now (not held behind a pause) for a published, live incarnation: the controller moves its sequence on.
    const reportedNow = !model.disposed && !pty.paused && pty.heldEventCount === 0 && model.current.get(id) === pty.incarnationId && incarnation?.published === null
    const before = model.losses.length
    real.provider.emitOutputLoss(id, this.chars)
    if (reportedNow && (model.losses.length !== before + 1 || model.losses[before] !== this.chars)) {
      violate(model, `a loss of ${this.chars} chars of ${pty.incarnationId} was published as ${JSON.stringify(model.losses.slice(before))}`)
    }
  }
  toString(): string {
    return `Loss(${this.index}, ${this.chars})`
  }
}

class AttachCommand extends BaseCommand {
  constructor(readonly index: number) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id, incarnation } = pick(model, this.index)
    const pty = real.provider.getPty(id)
    // The host still holds the very process whose stop went unverified: the attach revives it.
    const revivable =
      incarnation !== undefined &&
      isUnverifiedExit(incarnation.published) &&
      pty?.live === true &&
      pty.incarnationId === incarnation.incarnationId &&
      pty.heldEventCount === 0
    model.reattaching = true
    let attached: boolean
    try {
      attached = await real.controller.attach(id)
      await settle(real)
    } finally {
      model.reattaching = false
    }
    if (revivable && !attached) violate(model, `attach(${id}) refused ${incarnation.incarnationId}, alive after an unverified stop`)
  }
  toString(): string {
    return `Attach(${this.index})`
  }
}

class AckCommand extends BaseCommand {
  constructor(
    readonly index: number,
    readonly chars: number,
  ) {
    super()
  }
  async act(model: Model, real: Real): Promise<void> {
    const { id } = pick(model, this.index)
    real.controller.acknowledgeData(id, this.chars)
    const state = real.controller.getFlowControlState(id)
    if (state !== null && state.unacknowledgedChars < 0) violate(model, `negative in-flight count for ${id}`)
  }
  toString(): string {
    return `Ack(${this.index}, ${this.chars})`
  }
}

class AdvanceCommand extends BaseCommand {
  constructor(readonly ms: number) {
    super()
  }
  override check(model: Readonly<Model>): boolean {
    return !model.disposed
  }
  async act(_model: Model, real: Real): Promise<void> {
    real.clock.advance(this.ms)
  }
  toString(): string {
    return `Advance(${this.ms})`
  }
}

class DisposeCommand extends BaseCommand {
  /** `false`: `dispose({ stopPtys: false })`, which lets go of every PTY without stopping it. */
  constructor(readonly stopPtys: boolean) {
    super()
  }
  override check(model: Readonly<Model>): boolean {
    return !model.disposed
  }
  async act(model: Model, real: Real): Promise<void> {
    if (!this.stopPtys) return this.#letGo(model, real)
    const confirming: string[] = []
    for (const [id, incarnationId] of model.current) {
      const incarnation = model.incarnations.get(incarnationId)
      if (incarnation === undefined) continue
      requestStop(incarnation, real, model)
      incarnation.stopAndWaited = true
      const pty = real.provider.getPty(id)
      if (incarnation.behaviour === 'confirm' && pty?.live === true && pty.incarnationId === incarnationId) confirming.push(id)
    }
    await drive(real, real.controller.dispose())
    model.disposed = true
    model.disposeStoppedPtys = true
    for (const [id, incarnationId] of model.current) {
      const incarnation = model.incarnations.get(incarnationId)
      const pty = real.provider.getPty(id)
      const stillOurs = pty?.incarnationId === incarnationId
      if (stillOurs && incarnation?.published === null && !(pty?.live === false && (pty.heldEventCount ?? 0) > 0)) {
        violate(model, `dispose left ${incarnationId} without an exit`)
      }
    }
    for (const id of confirming) {
      if (real.provider.getPty(id)?.live === true) violate(model, `dispose left confirming ${id} live`)
    }
    checkReleased(model, real)
  }
  async #letGo(model: Model, real: Real): Promise<void> {
    // Live, published, no stop asked for: these must be left running, untouched.
    const running = [...model.current].filter(([id, incarnationId]) => {
      const incarnation = model.incarnations.get(incarnationId)
      const pty = real.provider.getPty(id)
      return incarnation !== undefined && !incarnation.stopRequested && incarnation.published === null && pty?.live === true && pty.incarnationId === incarnationId
    })
    const shutdowns = (): number => real.provider.calls.filter((call) => call.method === 'shutdown').length
    const shutdownsBefore = shutdowns()
    await drive(real, real.controller.dispose({ stopPtys: false }))
    model.disposed = true
    if (shutdowns() !== shutdownsBefore) violate(model, 'dispose({ stopPtys: false }) asked the provider to stop a PTY')
    for (const [id, incarnationId] of running) {
      if (real.provider.getPty(id)?.live !== true) violate(model, `dispose({ stopPtys: false }) ended ${incarnationId}`)
      if (model.incarnations.get(incarnationId)?.published !== null) violate(model, `dispose({ stopPtys: false }) published an exit of ${incarnationId}`)
    }
    checkReleased(model, real)
  }
  toString(): string {
    return this.stopPtys ? 'Dispose' : 'Dispose({ stopPtys: false })'
  }
}

/** After a dispose: no subscription (but the model's own), listener or timer is left. */
function checkReleased(model: Model, real: Real): void {
  if (real.provider.listenerCount() !== 1) violate(model, 'dispose left provider listeners behind')
  if (real.controller.listenerCount('exit') !== 0) violate(model, 'dispose left controller listeners behind')
  if (real.clock.pendingTimerCount() !== 0) violate(model, 'dispose left timers behind')
}

class UseAfterDisposeCommand implements Command {
  check(model: Readonly<Model>): boolean {
    return model.disposed
  }
  async run(model: Model, real: Real): Promise<void> {
    const callsBefore = real.provider.calls.length
    const id = model.ids[0] ?? 'x'
    const incarnationId = model.current.get(id)
    const incarnation = incarnationId === undefined ? undefined : model.incarnations.get(incarnationId)
    // A PTY whose stop disposal gave up on (`stop_unverified`, its death not proven since) still
    // gets a forced shutdown from a late kill, which answers `true`; any other late kill is `false`
    // and dispatches nothing.
    const cause = incarnation?.published?.cause
    const givenUp = model.disposeStoppedPtys === true && cause?.kind === 'unknown' && cause.reason === 'stop_unverified' && incarnation?.provenDead === false
    expect(real.controller.kill(id)).toBe(givenUp)
    real.controller.acknowledgeData(id, 1)
    expect(real.provider.calls.slice(callsBefore).map((call) => [call.method, ...call.args])).toEqual(
      givenUp ? [['shutdown', id, { immediate: true, expectedIncarnationId: incarnationId }]] : [],
    )
    expect(real.controller.write(model.ids[0] ?? 'x', 'x', 'driving')).toBe(false)
    await expect(real.controller.spawn({})).rejects.toBeInstanceOf(PtyControllerDisposedError)
  }
  toString(): string {
    return 'UseAfterDispose'
  }
}

const modelExitArb: fc.Arbitrary<ModelExit> = fc.record(
  {
    code: fc.constantFrom(0, 1, 3, 130, -1),
    signal: fc.constantFrom(1, 9, 15),
    withoutCause: fc.boolean(),
    hostReports: fc.boolean(),
    stopAttested: fc.boolean(),
  },
  { requiredKeys: ['code'] },
)
const indexArb = fc.nat({ max: MAX_PTY_IDS * 2 })
const behaviourArb = fc.constantFrom<FakeShutdownBehaviour>('confirm', 'confirm', 'never_confirm', 'fail', 'time_out', 'exit_unreported')

const freshSpawnArb = fc
  .tuple(
    behaviourArb,
    fc.boolean(),
    // The scripted output's chunk sizes, written as `outputAt` text from the stream's start on.
    fc.array(fc.constantFrom(1, 5, 600), { maxLength: 3 }).map((sizes) => {
      let at = 0
      return sizes.map((size) => outputAt((at += size) - size, size))
    }),
    fc.oneof(
      { weight: 5, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.record({ code: fc.constantFrom(0, 2), signal: fc.constantFrom(9, 15) }, { requiredKeys: ['code'] }) },
    ),
    fc.boolean(),
  )
  .map(([behaviour, noStatus, output, exit, beforeReply]) => new SpawnCommand(behaviour, noStatus, output, exit, beforeReply, null))
const reuseSpawnArb = fc
  .tuple(behaviourArb, indexArb)
  .map(([behaviour, index]) => new SpawnCommand(behaviour, false, [], undefined, false, index))

/** Weighted by repetition (fc.commands picks uniformly): dispose is rare, so sequences get long before it. */
const commandArbs: fc.Arbitrary<Command>[] = [
  freshSpawnArb,
  freshSpawnArb,
  freshSpawnArb,
  reuseSpawnArb,
  ...Array.from({ length: 2 }, () =>
    fc.tuple(indexArb, fc.option(fc.uint8Array({ minLength: 1, maxLength: 8 }), { nil: null })).map(([index, bytes]) => new WriteCommand(index, bytes)),
  ),
  fc.tuple(indexArb, fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 100 })).map(([i, c, r]) => new ResizeCommand(i, c, r)),
  ...Array.from({ length: 2 }, () => indexArb.map((index) => new KillCommand(index))),
  ...Array.from({ length: 2 }, () =>
    fc.tuple(indexArb, fc.constantFrom(undefined, 100, 6_000)).map(([index, deadline]) => new StopAndWaitCommand(index, deadline)),
  ),
  ...Array.from({ length: 3 }, () => fc.tuple(indexArb, modelExitArb).map(([index, exit]) => new ProviderExitCommand(index, exit))),
  indexArb.map((index) => new StaleExitCommand(index)),
  indexArb.map((index) => new ProbeCommand(index)),
  ...Array.from({ length: 3 }, () =>
    fc.tuple(indexArb, fc.constantFrom(1, 50, 500, 1_200)).map(([index, size]) => new DataCommand(index, size)),
  ),
  ...Array.from({ length: 2 }, () =>
    fc.tuple(indexArb, fc.constantFrom(1, 100, 900, 5_000)).map(([index, chars]) => new AckCommand(index, chars)),
  ),
  fc.tuple(indexArb, fc.constantFrom(1, 700, 40_000)).map(([index, chars]) => new LossCommand(index, chars)),
  ...Array.from({ length: 2 }, () => indexArb.map((index) => new AttachCommand(index))),
  ...Array.from({ length: 2 }, () => fc.constantFrom(1, 50, 199, 200, 1_000, 5_000, 10_000).map((ms) => new AdvanceCommand(ms))),
  fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom<Command>(new DisposeCommand(true), new DisposeCommand(false)) },
    { weight: 2, arbitrary: fc.constant<Command>(new AdvanceCommand(1)) },
  ),
  fc.constant(new UseAfterDisposeCommand()),
]

describe('controller model', () => {
  // 1 000 runs are seconds of CPU, and several times that in wall time on a loaded machine (21 s
  // once, past the 20 s default). The timeout guards against a hang, not speed.
  it('agrees with the evidence model over random command sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbs, { maxCommands: 80, size: 'max' }), async (commands) => {
        const clock = createManualClock()
        const provider = createFakePtyProvider({ scheduling: 'microtask', now: () => clock.now() })
        const model: Model = {
          incarnations: new Map(),
          current: new Map(),
          ids: [],
          requestedExits: new Map(),
          intent: undefined,
          reattaching: false,
          emittingStale: false,
          disposed: false,
          violations: [],
          seqs: new Map(),
          losses: [],
          streamStarts: new Map(),
        }
        // Subscribed before the controller, so the evidence is recorded before the controller acts on it.
        provider.onExit(providerExitListener(model))
        const runtime = createInMemoryPtyRuntime()
        const controller = createPtyController({ provider, clock, runtime, flowControl: FLOW })
        const real: Real = { provider, runtime, clock, controller, openPauses: new Map(), checkedCalls: 0 }
        wire(model, real)
        await fc.asyncModelRun(() => ({ model, real }), commands)
      }),
      { numRuns: 1_000 },
    )
    // A stop whose exit report is lost (the fake's `exit_unreported`) is verified by a listing and
    // published as `operator_close`: the runs must have checked that path, not only the others.
    expect(reached.exitsVerifiedByListing).toBeGreaterThan(0)
  }, 120_000)
})
