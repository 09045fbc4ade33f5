import { probedIncarnation } from '../contracts/liveness-probe-options.js'
import type { PtyCwdOptions, PtyLivenessProbeOptions } from '../contracts/index.js'
import { assertWriteBytes, assertWriteData } from '../contracts/write-settlement.js'
import { assertAcknowledgedChars, assertCwdOptions, assertListProcessesOptions, assertPtyIdArgument, assertShutdownOptions } from '../contracts/provider-arguments.js'
import { callProvider } from '../contracts/call-provider.js'
import { assertResizeDimension } from '../contracts/pty-dimension.js'
import {
  WRITE_ACCEPTED,
  refusedWrite,
  unverifiableWrite,
  resolveWaitDeadline,
  type ProviderSpawnOptions,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyForegroundProcessEvidence,
  type PtyListProcessesOptions,
  type PtyOutputLossEvent,
  type PtyProcessInfo,
  type PtyProviderBufferSnapshot,
  type PtyShutdownOptions,
  type PtySpawnResult,
  type Unsubscribe,
  type WriteSettlement,
} from '../contracts/index.js'
import type { FakeProviderMethod, FakePtyProvider, FakeWrite } from './fake-pty-provider-types.js'
import { FakePtyProviderDisposedError } from './fake-pty-provider-disposed-error.js'
import { FakePtyProviderDetachedError } from './fake-pty-provider-detached-error.js'
import { FAKE_DEFAULT_PROCESS_NAME, FAKE_GRACEFUL_STOP_SIGNAL, FAKE_IMMEDIATE_STOP_SIGNAL, settleHeldInput, type FakePtyRecord } from './fake-pty-record.js'
import { fakeLivenessOf, type FakeProviderState } from './fake-provider-state.js'
import { rejectPendingFakeSpawns, startFakeSpawn } from './fake-spawning.js'
import { releaseScreen } from './fake-pty-events.js'

// The fake's `PtyProvider` methods: each records its call, then answers from the PTY table as a
// real provider would (the same refusals, the same deadline rules, the same single failure path).

/** The `PtyProvider` members of {@link FakePtyProvider}: the methods it records (everything but its identity, `calls` and the test controls). */
export type FakeProviderMethods = Pick<FakePtyProvider, FakeProviderMethod>

/** How a write of bytes shows in `FakeWrite.data` and `written`: decoded as UTF-8, a malformed sequence as U+FFFD. */
const utf8Decoder = new TextDecoder()

/**
 * A write the live `pty` takes: recorded and settled at once — or, while its program reads no
 * input (`setInputHeld`), held with the input before it and settled when released or dropped.
 */
function takeWrite(pty: FakePtyRecord, write: FakeWrite): WriteSettlement | Promise<WriteSettlement> {
  const held = pty.heldInput
  if (held === null) {
    pty.writes.push(write)
    return write.settlement
  }
  return new Promise<WriteSettlement>((settle) => {
    held.push({ write, settle })
  })
}

/** The fake's `PtyProvider` methods over `state`. */
export function createFakeProviderMethods(state: FakeProviderState): FakeProviderMethods {
  const { ptys, events } = state
  const record = state.record
  /** Detached, a call refused as the pty host provider refuses it after `detach()`. */
  const detachedRefusal = (method: string, ptyId?: string): FakePtyProviderDetachedError => new FakePtyProviderDetachedError(state.name, method, ptyId)
  /** Detached, whether `id`'s current incarnation is one whose exit was heard before the detach. */
  const exitSeen = (id: string): boolean => {
    const pty = ptys.get(id)
    return pty !== undefined && state.exitsSeenBeforeDetach.has(pty)
  }
  /** Detached, what a write is refused with: `pty_exited` for a PTY whose exit was heard, else `provider_refused_write` (nothing handed on). */
  const detachedWrite = (id: string): WriteSettlement => refusedWrite(exitSeen(id) ? 'pty_exited' : 'provider_refused_write')

  return {
    spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
      record('spawn', [spawnOptions])
      // Typed, with the code every real provider refuses it with (use after dispose).
      if (state.disposed) return Promise.reject(new FakePtyProviderDisposedError(state.name, 'spawn'))
      if (state.detached) return Promise.reject(detachedRefusal('spawn'))
      // A refused option rejects (never throws): the same single failure path as every provider.
      return callProvider(() => startFakeSpawn(state, spawnOptions))
    },

    write(id: string, data: string): WriteSettlement | Promise<WriteSettlement> {
      assertWriteData(data)
      record('write', [id, data])
      assertPtyIdArgument(id)
      if (state.detached) return detachedWrite(id)
      const pty = ptys.get(id)
      if (pty === undefined) return refusedWrite('pty_not_found')
      if (pty.state !== 'live') return refusedWrite('pty_exited')
      const settlement = pty.writeSettlement ?? WRITE_ACCEPTED
      return takeWrite(pty, { data, settlement })
    },

    writeBytes(id: string, bytes: Uint8Array): WriteSettlement | Promise<WriteSettlement> {
      assertWriteBytes(bytes)
      record('writeBytes', [id, bytes])
      assertPtyIdArgument(id)
      if (state.detached) return detachedWrite(id)
      const pty = ptys.get(id)
      if (pty === undefined) return refusedWrite('pty_not_found')
      if (pty.state !== 'live') return refusedWrite('pty_exited')
      const settlement = pty.writeSettlement ?? WRITE_ACCEPTED
      // A copy: the caller may reuse its buffer once the call returns (as the contract allows).
      const copy = Uint8Array.from(bytes)
      return takeWrite(pty, { data: utf8Decoder.decode(copy), bytes: copy, settlement })
    },

    resize(id: string, cols: number, rows: number): boolean {
      record('resize', [id, cols, rows])
      assertPtyIdArgument(id)
      assertResizeDimension('cols', cols)
      assertResizeDimension('rows', rows)
      if (state.detached) return false
      const pty = ptys.get(id)
      if (pty === undefined || pty.state !== 'live') return false
      pty.cols = cols
      pty.rows = rows
      return true
    },

    getSize(id: string): { cols: number; rows: number } | null {
      record('getSize', [id])
      assertPtyIdArgument(id)
      // Detached: nothing can be read back.
      if (state.detached) return null
      const pty = ptys.get(id)
      if (pty === undefined || pty.state !== 'live') return null
      return { cols: pty.cols, rows: pty.rows }
    },

    shutdown(id: string, shutdownOptions?: PtyShutdownOptions): Promise<void> {
      record('shutdown', shutdownOptions === undefined ? [id] : [id, shutdownOptions])
      try {
        assertPtyIdArgument(id)
        assertShutdownOptions(shutdownOptions)
        // Same rules as every provider: deadlineMs absolute, timeoutMs a duration, not both, finite.
        resolveWaitDeadline(shutdownOptions, 0)
      } catch (error) {
        return Promise.reject(error)
      }
      // Detached: nothing reaches the PTY, which runs on — refused naming it (a resolved stop would
      // say it was stopped), but for one whose exit was heard, whose stop has nothing left to do.
      if (state.detached) return exitSeen(id) ? Promise.resolve() : Promise.reject(detachedRefusal('shutdown', id))
      const pty = ptys.get(id)
      if (pty !== undefined && !pty.stopRequested) {
        pty.stopRequested = true
        // Dead on its own before the first stop (its exit maybe still held behind output): the exit says so (issue 13.4).
        if (pty.state === 'exited' && pty.exit !== null && pty.exit.incarnationId === pty.incarnationId) pty.exit.diedBeforeStopRequest = true
      }
      if (pty === undefined || pty.state !== 'live') return Promise.resolve()
      const expected = shutdownOptions?.expectedIncarnationId
      // Why: a stop aimed at an older incarnation must leave the replacement alone.
      if (expected !== undefined && expected !== pty.incarnationId) return Promise.resolve()
      switch (pty.shutdownBehaviour) {
        case 'fail':
          return Promise.reject(new Error(`Fake shutdown of PTY ${JSON.stringify(id)} failed (scripted)`))
        case 'time_out':
          // Sent, not seen done by its deadline: the stop may still land (the test emits the exit).
          return Promise.reject(Object.assign(new Error(`Fake PTY ${JSON.stringify(id)} could not be stopped by its deadline (scripted)`), { code: 'shutdown_timeout', ptyId: id }))
        case 'never_confirm':
          return Promise.resolve()
        case 'exit_unreported':
          // Gone, and nobody is told: no exit event, ever (held output still comes out on resume).
          pty.state = 'exited'
          releaseScreen(pty)
          settleHeldInput(pty, refusedWrite('pty_exited'))
          return Promise.resolve()
        case 'confirm':
          // As the real providers attest a stop that reached a live process (a controller reads
          // it as an operator close even when the stop was not its own).
          events.endProcess(pty, {
            exitCode: 0,
            signal: shutdownOptions?.immediate === true ? FAKE_IMMEDIATE_STOP_SIGNAL : FAKE_GRACEFUL_STOP_SIGNAL,
            stopRequestedBeforeDeath: true,
          })
          return Promise.resolve()
      }
    },

    pauseProducer(id: string): void {
      record('pauseProducer', [id])
      assertPtyIdArgument(id)
      if (state.detached) return
      const pty = ptys.get(id)
      if (pty !== undefined) pty.paused = true
    },

    resumeProducer(id: string): void {
      record('resumeProducer', [id])
      assertPtyIdArgument(id)
      if (state.detached) return
      const pty = ptys.get(id)
      if (pty === undefined) return
      pty.paused = false
      events.flushHeld(pty, false)
    },

    acknowledgeData(id: string, chars: number): void {
      record('acknowledgeData', [id, chars])
      assertPtyIdArgument(id)
      assertAcknowledgedChars(chars)
      if (state.detached) return
      const pty = ptys.get(id)
      if (pty !== undefined) pty.acknowledgedChars += chars
    },

    listProcesses(listOptions?: PtyListProcessesOptions): Promise<PtyProcessInfo[]> {
      record('listProcesses', listOptions === undefined ? [] : [listOptions])
      try {
        assertListProcessesOptions(listOptions)
        // Read as every provider must (absolute `deadlineMs`, relative `timeoutMs`): a malformed
        // budget is a TypeError naming the option. The fake answers at once, so any deadline —
        // a past one included ("ask once, do not wait") — gets the full listing.
        resolveWaitDeadline(listOptions, 0)
      } catch (error) {
        return Promise.reject(error)
      }
      // Detached: an empty (or any) listing would be a guess — it would prove the PTYs gone.
      if (state.detached) return Promise.reject(detachedRefusal('listProcesses'))
      if (state.listingFailure !== undefined) return Promise.reject(state.listingFailure.error)
      const rows: PtyProcessInfo[] = []
      for (const pty of ptys.values()) {
        if (pty.state !== 'live') continue
        const row: PtyProcessInfo = {
          id: pty.id,
          hostId: state.hostId,
          incarnationId: pty.incarnationId,
          pid: pty.pid,
          cwd: pty.options.cwd ?? null,
          title: pty.foregroundProcess ?? FAKE_DEFAULT_PROCESS_NAME,
        }
        if (pty.options.scopeId !== undefined) row.scopeId = pty.options.scopeId
        if (pty.options.slotKey !== undefined) row.slotKey = pty.options.slotKey
        if (pty.options.claimKey !== undefined) row.claimKey = pty.options.claimKey
        rows.push(row)
      }
      return Promise.resolve(rows)
    },

    hasPty(id: string): boolean | null {
      record('hasPty', [id])
      assertPtyIdArgument(id)
      return fakeLivenessOf(state, id)
    },

    probeLiveness(id: string, options?: PtyLivenessProbeOptions): Promise<boolean | null> {
      record('probeLiveness', options === undefined ? [id] : [id, options])
      // Through callProvider: a refused option rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        return fakeLivenessOf(state, id, probedIncarnation(options))
      })
    },

    getCwd(id: string, options?: PtyCwdOptions): Promise<string | null> {
      record('getCwd', options === undefined ? [id] : [id, options])
      // Through callProvider: a refused argument rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        assertCwdOptions(options)
        if (state.detached) return null
        const pty = ptys.get(id)
        return pty !== undefined && pty.state === 'live' ? (pty.options.cwd ?? null) : null
      })
    },

    getForegroundProcess(id: string): Promise<string | null> {
      record('getForegroundProcess', [id])
      // Through callProvider: a refused argument rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        const pty = ptys.get(id)
        return pty !== undefined && pty.state === 'live' && !state.detached ? pty.foregroundProcess : null
      })
    },

    hasChildProcesses(id: string): Promise<boolean | null> {
      record('hasChildProcesses', [id])
      // Through callProvider: a refused argument rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        const pty = ptys.get(id)
        return pty !== undefined && pty.state === 'live' && !state.detached ? pty.hasChildProcesses : null
      })
    },

    confirmForeground(id: string): Promise<PtyForegroundProcessEvidence | null> {
      record('confirmForeground', [id])
      // Through callProvider: a refused argument rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        const pty = ptys.get(id)
        const evidence = pty !== undefined && pty.state === 'live' && !state.detached ? pty.foregroundEvidence : null
        return evidence === null ? null : { ...evidence }
      })
    },

    supportsForegroundProcessEvidence(): boolean {
      record('supportsForegroundProcessEvidence', [])
      return state.options.foregroundProcessEvidence ?? true
    },

    resetInputModes(id: string): Promise<void> {
      record('resetInputModes', [id])
      // Through callProvider: a refused argument rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        const pty = ptys.get(id)
        if (pty !== undefined && pty.state === 'live' && !state.detached) pty.inputModeResets += 1
      })
    },

    clearBuffer(id: string): Promise<void> {
      record('clearBuffer', [id])
      // Through callProvider: a refused argument rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        // As the pty host provider's: the host keeps the screen for the next app — a clear "done" would be untrue.
        if (state.detached) throw detachedRefusal('clearBuffer', id)
        const pty = ptys.get(id)
        if (pty !== undefined) pty.buffer = ''
      })
    },

    getBufferSnapshot(id: string, snapshotOptions?: { scrollbackRows?: number | undefined }): Promise<PtyProviderBufferSnapshot | null> {
      record('getBufferSnapshot', snapshotOptions === undefined ? [id] : [id, snapshotOptions])
      // Through callProvider: a refused argument rejects, never throws.
      return callProvider(() => {
        assertPtyIdArgument(id)
        const pty = ptys.get(id)
        if (pty === undefined || pty.state !== 'live' || state.detached) return Promise.resolve(null)
        return { data: pty.buffer, cols: pty.cols, rows: pty.rows, seq: pty.producedChars, source: 'fake', incarnationId: pty.incarnationId }
      })
    },

    detach(): Promise<void> {
      record('detach', [])
      // Once disposed, nothing is left to let go of (as the pty host's `detach()` answers with its dispose).
      if (state.disposed || state.detached) return Promise.resolve()
      for (const pty of ptys.values()) {
        // Heard of: an exit no longer held behind paused output.
        if (pty.state !== 'live' && pty.exit !== null && !pty.held.some((held) => held.kind === 'exit')) state.exitsSeenBeforeDetach.add(pty)
        // What was held for a paused consumer never reaches it now; held input, handed to the
        // process or not, is out of sight — as a write the pty host had in flight at a close.
        pty.held.length = 0
        if (pty.heldInput !== null) settleHeldInput(pty, unverifiableWrite('transport_lost', true))
      }
      state.detached = true
      // Scripted output and exits still play (the process does what its script says), unheard.
      events.blind = true
      return Promise.resolve()
    },

    onData(listener: (event: PtyDataEvent) => void): Unsubscribe {
      record('onData', [listener])
      return events.data.add(listener)
    },

    onExit(listener: (event: PtyExitEvent) => void): Unsubscribe {
      record('onExit', [listener])
      return events.exit.add(listener)
    },

    onOutputLoss(listener: (event: PtyOutputLossEvent) => void): Unsubscribe {
      record('onOutputLoss', [listener])
      return events.loss.add(listener)
    },

    dispose(): Promise<void> {
      record('dispose', [])
      if (state.disposed) return Promise.resolve()
      state.disposed = true
      // Detached before: the PTYs run on where the fake no longer sees them — it stops none (as
      // the pty host provider's dispose after a detach), and reports no exit.
      for (const pty of state.detached ? [] : [...ptys.values()]) {
        if (pty.state !== 'live') {
          events.flushHeld(pty, true)
          continue
        }
        pty.paused = false
        events.flushHeld(pty, true)
        events.endProcess(pty, { exitCode: 0, signal: FAKE_IMMEDIATE_STOP_SIGNAL, stopRequestedBeforeDeath: true })
      }
      rejectPendingFakeSpawns(state)
      state.deliveries.clear()
      events.data.clear()
      events.exit.clear()
      events.loss.clear()
      return Promise.resolve()
    },
  }
}

