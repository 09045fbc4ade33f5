import { describeValue } from '../contracts/describe-value.js'
import { isPtyForegroundProcessEvidence } from '../contracts/process-info.js'
import { isWriteSettlement, type WriteSettlement } from '../contracts/index.js'
import type { FakeProcessInfo, FakePtyInspection, FakePtyProvider } from './fake-pty-provider-types.js'
import { inspectFakePty } from './fake-pty-record.js'
import { requireFakePty, type FakeProviderState } from './fake-provider-state.js'
import type { FakePtyRecord } from './fake-pty-record.js'
import { settleHeldInput } from './fake-pty-record.js'
import { failFakeSpawn, releaseFakeSpawn } from './fake-spawning.js'
import {
  assertFakeExit,
  assertFakeSpawnScript,
  FAKE_SHUTDOWN_BEHAVIOURS,
  isPlainObject,
  quotedFakeShutdownBehaviours,
  type FakeExit,
  type FakeShutdownBehaviour,
  type FakeSpawnScript,
} from './fake-spawn-script.js'

// The test controls of the fake: what a test scripts, emits, overrides and inspects beyond the
// `PtyProvider` contract. They throw a `TypeError` naming the control for an id never spawned, a
// malformed argument, and for what could change nothing (see `assertInUse`, `assertNotExited`).

/** The test controls of {@link FakePtyProvider} (its members beyond `PtyProvider`). */
export type FakeTestControls = Pick<
  FakePtyProvider,
  | 'scriptNextSpawn'
  | 'emitData'
  | 'emitOutputLoss'
  | 'emitExit'
  | 'setLiveness'
  | 'setWriteSettlement'
  | 'setInputHeld'
  | 'setShutdownBehaviour'
  | 'setProcessInfo'
  | 'setListingFailure'
  | 'livePtyIds'
  | 'getPty'
  | 'clearCalls'
  | 'releaseSpawn'
  | 'failSpawn'
  | 'pendingSpawnCount'
  | 'listenerCount'
  | 'settle'
>

/**
 * Throw a `TypeError` naming the control when the fake was disposed or detached: what it would
 * emit or script could never be seen (a disposed fake refuses every call; a detached one hears
 * nothing of its PTYs and answers "unknown"), so a test driving it there tests nothing. Why throw:
 * it was accepted in silence — a `setLiveness(id, true)` or a `scriptNextSpawn` after `dispose()`
 * left the test to wonder why nothing it scripted happened (or to pass while testing nothing).
 */
function assertInUse(state: FakeProviderState, control: string): void {
  if (state.disposed) {
    throw new TypeError(`${control}: the fake PTY provider ${JSON.stringify(state.name)} was disposed; it refuses every call now, so nothing ${control} scripts or emits can be seen`)
  }
  if (state.detached) {
    throw new TypeError(`${control}: the fake PTY provider ${JSON.stringify(state.name)} was detached; it no longer sees its PTYs, so nothing ${control} scripts or emits can be seen`)
  }
}

/**
 * Throw a `TypeError` naming the control when `pty` already exited: what it would set (a stop's
 * behaviour, an inspection's answer, a write's settlement, held input) is never used again — a
 * stop of it resolves, its inspections answer `null`, its writes are refused `pty_exited` — so it
 * was accepted in silence, and a test setting it on the wrong id tested nothing.
 */
function assertNotExited(pty: FakePtyRecord, control: string): void {
  if (pty.state !== 'live') {
    throw new TypeError(`${control}: the fake PTY ${JSON.stringify(pty.id)} already exited; nothing ${control} sets is used for it now`)
  }
}

/** The test controls over `state`. */
export function createFakeTestControls(state: FakeProviderState): FakeTestControls {
  return {
    scriptNextSpawn(script: FakeSpawnScript): void {
      assertFakeSpawnScript(script, 'the `script` argument')
      assertInUse(state, 'scriptNextSpawn')
      state.scriptQueue.push(script)
    },

    emitData(id: string, data: string): void {
      const pty = requireFakePty(state, id, 'emitData')
      if (typeof data !== 'string') throw new TypeError(`Expected the \`data\` argument of emitData to be a string, got ${describeValue(data)}`)
      assertInUse(state, 'emitData')
      if (pty.state !== 'live') {
        throw new TypeError(
          `emitData: the fake PTY ${JSON.stringify(id)} is not live; output after its exit would break the data-before-exit rule`,
        )
      }
      state.events.produceData(pty, data)
    },

    emitOutputLoss(id: string, chars: number): void {
      const pty = requireFakePty(state, id, 'emitOutputLoss')
      if (!Number.isSafeInteger(chars) || chars <= 0) {
        throw new TypeError(`Expected the \`chars\` argument of emitOutputLoss to be a positive integer, got ${describeValue(chars)}`)
      }
      assertInUse(state, 'emitOutputLoss')
      if (pty.state !== 'live') {
        throw new TypeError(`emitOutputLoss: the fake PTY ${JSON.stringify(id)} is not live; nothing of it follows its exit`)
      }
      state.events.produceLoss(pty, chars)
    },

    emitExit(id: string, exit: FakeExit): void {
      const pty = requireFakePty(state, id, 'emitExit')
      assertFakeExit(exit, 'emitExit', 'the `exit` argument of emitExit')
      assertInUse(state, 'emitExit')
      const minted = state.incarnationsById.get(id) ?? []
      if (exit.incarnationId !== undefined && !minted.includes(exit.incarnationId)) {
        // A typo, or another id's incarnation: emitted as a stale exit, it ended nothing — and a
        // test meaning to end the PTY passed on a PTY still live.
        throw new TypeError(
          `emitExit: the \`incarnationId\` of the \`exit\` argument, ${describeValue(exit.incarnationId)}, is no incarnation the fake minted under the id ${JSON.stringify(id)} (${minted.map((incarnation) => JSON.stringify(incarnation)).join(', ')}); leave it out to end the current one`,
        )
      }
      if (exit.incarnationId !== undefined && exit.incarnationId !== pty.incarnationId) {
        // A stale exit of an older process: reported as such, and the current process lives on.
        state.events.exit.fire(state.events.exitEvent(pty, exit, exit.incarnationId))
        return
      }
      if (pty.state !== 'live') {
        throw new TypeError(`emitExit: the fake PTY ${JSON.stringify(id)} already exited; a second exit would be a lie`)
      }
      state.events.endProcess(pty, exit)
    },

    setLiveness(id: string, value: boolean | null | undefined): void {
      const pty = requireFakePty(state, id, 'setLiveness')
      if (value !== true && value !== false && value !== null && value !== undefined) {
        throw new TypeError(`Expected the \`value\` argument of setLiveness to be true, false, null or undefined, got ${describeValue(value)}`)
      }
      assertInUse(state, 'setLiveness')
      pty.liveness = value
    },

    setWriteSettlement(id: string, settlement: WriteSettlement | undefined): void {
      const pty = requireFakePty(state, id, 'setWriteSettlement')
      if (settlement !== undefined && !isWriteSettlement(settlement)) {
        throw new TypeError(`Expected the \`settlement\` argument of setWriteSettlement to be a WriteSettlement or undefined, got ${describeValue(settlement)}`)
      }
      assertInUse(state, 'setWriteSettlement')
      assertNotExited(pty, 'setWriteSettlement')
      pty.writeSettlement = settlement
    },

    setInputHeld(id: string, held: boolean): void {
      const pty = requireFakePty(state, id, 'setInputHeld')
      if (typeof held !== 'boolean') throw new TypeError(`Expected the \`held\` argument of setInputHeld to be a boolean, got ${describeValue(held)}`)
      assertInUse(state, 'setInputHeld')
      assertNotExited(pty, 'setInputHeld')
      if (held) pty.heldInput ??= []
      else settleHeldInput(pty)
    },

    setShutdownBehaviour(id: string, behaviour: FakeShutdownBehaviour): void {
      const pty = requireFakePty(state, id, 'setShutdownBehaviour')
      if (!FAKE_SHUTDOWN_BEHAVIOURS.includes(behaviour)) {
        throw new TypeError(`Expected the \`behaviour\` argument of setShutdownBehaviour to be one of ${quotedFakeShutdownBehaviours()}, got ${describeValue(behaviour)}`)
      }
      assertInUse(state, 'setShutdownBehaviour')
      assertNotExited(pty, 'setShutdownBehaviour')
      pty.shutdownBehaviour = behaviour
    },

    setProcessInfo(id: string, info: FakeProcessInfo): void {
      const pty = requireFakePty(state, id, 'setProcessInfo')
      assertFakeProcessInfo(info)
      assertInUse(state, 'setProcessInfo')
      assertNotExited(pty, 'setProcessInfo')
      if (info.foregroundEvidence !== undefined) pty.foregroundEvidence = info.foregroundEvidence === null ? null : { ...info.foregroundEvidence }
      if (info.foregroundProcess !== undefined) pty.foregroundProcess = info.foregroundProcess
      if (info.hasChildProcesses !== undefined) pty.hasChildProcesses = info.hasChildProcesses
    },

    setListingFailure(error: unknown): void {
      // `null` read as "clear" by many a caller: the listing then rejected with `null`.
      if (error === null) throw new TypeError('Expected the `error` argument of setListingFailure to be the error listings reject with, or undefined to clear it, got null')
      // Not refused once disposed or detached: a suite's helper may set it whatever the state
      // (test/controller's disposeLikeSsh does, after dispose).
      state.listingFailure = error === undefined ? undefined : { error }
    },

    livePtyIds(): string[] {
      return [...state.ptys.values()].filter((pty) => pty.state === 'live').map((pty) => pty.id)
    },

    getPty(id: string): FakePtyInspection | undefined {
      const pty = state.ptys.get(id)
      if (pty === undefined) return undefined
      return inspectFakePty(pty, state.incarnationsById.get(id) ?? [])
    },

    clearCalls(): void {
      state.calls.length = 0
    },

    releaseSpawn(id?: string): void {
      if (state.disposed) throw new TypeError(`releaseSpawn: the fake PTY provider ${JSON.stringify(state.name)} was disposed; its hung spawns were rejected with it`)
      releaseFakeSpawn(state, id)
    },

    failSpawn(id?: string, error: unknown = new Error('Fake spawn failed (scripted)')): void {
      if (state.disposed) throw new TypeError(`failSpawn: the fake PTY provider ${JSON.stringify(state.name)} was disposed; its hung spawns were rejected with it`)
      failFakeSpawn(state, id, error)
    },

    pendingSpawnCount(): number {
      return state.pendingSpawns.length
    },

    listenerCount(): number {
      return state.events.data.size + state.events.exit.size + state.events.loss.size
    },

    settle(): Promise<void> {
      return state.deliveries.settle()
    },
  }
}

/** Throw a `TypeError` naming the field unless `info` is a {@link FakeProcessInfo}. */
function assertFakeProcessInfo(info: unknown): asserts info is FakeProcessInfo {
  const where = 'the `info` argument of setProcessInfo'
  if (!isPlainObject(info)) throw new TypeError(`Expected ${where} to be a FakeProcessInfo object, got ${describeValue(info)}`)
  const { foregroundProcess, hasChildProcesses, foregroundEvidence } = info
  if (foregroundProcess !== undefined && foregroundProcess !== null && typeof foregroundProcess !== 'string') {
    throw new TypeError(`Expected the \`foregroundProcess\` of ${where} to be a string, null or undefined, got ${describeValue(foregroundProcess)}`)
  }
  if (hasChildProcesses !== undefined && hasChildProcesses !== null && typeof hasChildProcesses !== 'boolean') {
    throw new TypeError(`Expected the \`hasChildProcesses\` of ${where} to be a boolean, null or undefined, got ${describeValue(hasChildProcesses)}`)
  }
  if (foregroundEvidence !== undefined && foregroundEvidence !== null && !isPtyForegroundProcessEvidence(foregroundEvidence)) {
    throw new TypeError(
      `Expected the \`foregroundEvidence\` of ${where} to be { foregroundProcess: string, shellForeground: boolean }, null or undefined, got ${describeValue(foregroundEvidence)}`,
    )
  }
}
