import { describeValue } from '../contracts/describe-value.js'
import { isOptionsObject } from '../contracts/known-options.js'
import { assertNoMisspeltSpawnOption } from '../contracts/spawn-options.js'
import {
  refusedWrite,
  rethrowOnMicrotask,
  toPtyIncarnationId,
  type ProviderSpawnOptions,
  type PtySpawnResult,
} from '../contracts/index.js'
import { checkFakeDimension, checkFakeLaunchOptions } from './fake-launch-options.js'
import { FakePtyAbsentError } from './fake-pty-absent-error.js'
import { FakePtyIdInUseError } from './fake-pty-id-in-use-error.js'
import { FakePtyLiveOtherIncarnationError } from './fake-pty-live-other-incarnation-error.js'
import { FakePtyProviderDisposedError } from './fake-pty-provider-disposed-error.js'
import { createFakePtyRecord, settleHeldInput, type FakePtyRecord, type PendingSpawn } from './fake-pty-record.js'
import type { FakeProviderState } from './fake-provider-state.js'
import { scriptFromMetadata, type FakeSpawnScript } from './fake-spawn-script.js'

// Spawning: which script a spawn plays, a fresh incarnation or an attach to a live one, spawns
// whose reply a script holds (`hang`), and the scripted events that follow a reply.

/**
 * The body of the fake's `spawn`: check the size, then attach (attach-only, or a persistent
 * session that is live) or start a fresh incarnation. Throws where a real provider would reject;
 * the caller wraps it so that every failure is a rejection.
 */
export function startFakeSpawn(state: FakeProviderState, spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
  // As every real provider: `spawn(undefined)` was a raw "Cannot read properties of undefined", and
  // `spawn(5)` or `spawn([])` started a PTY with every option ignored.
  if (!isOptionsObject(spawnOptions)) throw new TypeError(`Expected the spawn options to be an object, got ${describeValue(spawnOptions)}`)
  // As every real provider: a misspelt option (`cdw`, `sessionID`, `id`) would be ignored, the default used.
  assertNoMisspeltSpawnOption(spawnOptions)
  if (spawnOptions.cols !== undefined) checkFakeDimension('cols', spawnOptions.cols)
  if (spawnOptions.rows !== undefined) checkFakeDimension('rows', spawnOptions.rows)
  const fromMetadata = scriptFromMetadata(spawnOptions.metadata)
  if (spawnOptions.attachOnly === true) return attach(state, spawnOptions, fromMetadata)
  const script = fromMetadata ?? state.scriptQueue.shift() ?? state.options.defaultScript ?? {}
  const existing = spawnOptions.sessionId === undefined ? undefined : state.ptys.get(spawnOptions.sessionId)
  // A persistent-session spawn of a live session attaches to it, as a daemon would.
  if (existing !== undefined && existing.state === 'live' && spawnOptions.isNewSession !== true && script.id === undefined) {
    return attach(state, spawnOptions, script)
  }
  return spawnFresh(state, spawnOptions, script)
}

function attach(
  state: FakeProviderState,
  spawnOptions: ProviderSpawnOptions,
  script: FakeSpawnScript | undefined,
): Promise<PtySpawnResult> {
  if (script?.fail !== undefined) return Promise.reject(script.fail)
  const id = spawnOptions.sessionId
  const pty = id === undefined ? undefined : state.ptys.get(id)
  if (pty === undefined || pty.state !== 'live') return Promise.reject(new FakePtyAbsentError(id))
  const expected = spawnOptions.expectedIncarnationId
  if (expected !== undefined && expected !== pty.incarnationId) {
    // Why not an absence: a process holds the id, so the expected one is not proven gone.
    return Promise.reject(
      new FakePtyLiveOtherIncarnationError(pty.id, { expectedIncarnationId: expected, liveIncarnationId: pty.incarnationId }),
    )
  }
  const result: PtySpawnResult = {
    id: pty.id,
    pid: pty.pid,
    incarnationId: pty.incarnationId,
    isReattach: true,
    providerSequence: { value: pty.producedChars, generation: 'continued' },
    cols: pty.cols,
    rows: pty.rows,
  }
  if (pty.hostReportsChildExitStatus !== undefined) result.hostReportsChildExitStatus = pty.hostReportsChildExitStatus
  return Promise.resolve(result)
}

function spawnFresh(state: FakeProviderState, spawnOptions: ProviderSpawnOptions, script: FakeSpawnScript): Promise<PtySpawnResult> {
  if (script.fail !== undefined) return Promise.reject(script.fail)
  const id = script.id ?? spawnOptions.sessionId ?? `${state.idPrefix}${++state.ptyCount}`
  const previous = state.ptys.get(id)
  const exitStillHeld = previous !== undefined && previous.state !== 'live' && previous.held.length > 0
  const held = previous !== undefined && (previous.state === 'live' || exitStillHeld)
  // A caller's session id that a PTY still holds is refused, as every real provider refuses it.
  if (held && script.id === undefined) return Promise.reject(new FakePtyIdInUseError(id, previous.incarnationId, exitStillHeld))
  // Then the launch fields, as a real provider checks them before it starts anything.
  checkFakeLaunchOptions(spawnOptions)
  if (held) {
    // Why: a script's reused id replaces the old process silently (a daemon that lost track of
    // it), its held output and exit delivered first; the test can still emit the old
    // incarnation's late exit with `emitExit(id, { incarnationId })`.
    state.events.flushHeld(previous, true)
    if (previous.state === 'live') {
      previous.state = 'replaced'
      settleHeldInput(previous, refusedWrite('provider_refused_write'))
      // Its fate is unknown from now on: a liveness probe about it answers `null`, never `false`.
      state.replacedIncarnations.add(previous.incarnationId)
    }
  }
  state.incarnationCount += 1
  const incarnationId = toPtyIncarnationId(`${state.idPrefix}inc-${state.incarnationCount}`)
  state.incarnationsById.set(id, [...(state.incarnationsById.get(id) ?? []), incarnationId])
  const hostReports = script.hostReportsChildExitStatus ?? state.options.hostReportsChildExitStatus
  const pty = createFakePtyRecord({
    id,
    incarnationId,
    incarnationNumber: state.incarnationCount,
    spawnOptions,
    script,
    hostReportsChildExitStatus: hostReports,
  })
  state.ptys.set(id, pty)
  if (script.commitOnSpawn !== false && spawnOptions.onPtySpawnCommitted !== undefined) {
    try {
      spawnOptions.onPtySpawnCommitted()
    } catch (error) {
      // Why: a host callback that throws must not strand a half-done spawn; reported on its own microtask.
      rethrowOnMicrotask(error)
    }
  }
  const result: PtySpawnResult = {
    id,
    pid: pty.pid,
    incarnationId,
    isReattach: false,
    // A new stream, as every real provider reports a fresh start (so a later re-attach's
    // `continued` count does not move the runtime's sequence again).
    providerSequence: script.providerSequence ?? { value: 0, generation: 'reset' },
    cols: pty.cols,
    rows: pty.rows,
  }
  if (hostReports !== undefined) result.hostReportsChildExitStatus = hostReports
  if (script.exitBeforeReply !== undefined) {
    for (const chunk of script.output ?? []) state.events.produceData(pty, chunk)
    state.events.endProcess(pty, script.exitBeforeReply)
    result.exitedBeforeSpawnReply = true
    return Promise.resolve(result)
  }
  if (script.hang === true) {
    return new Promise<PtySpawnResult>((resolve, reject) => {
      state.pendingSpawns.push({ record: pty, result, resolve, reject })
    })
  }
  const promise = Promise.resolve(result)
  scheduleAfterReply(state, pty, promise)
  return promise
}

// Scripted events after the reply: each is dropped if the process died (or was replaced) meanwhile.
function scheduleAfterReply(state: FakeProviderState, pty: FakePtyRecord, promise: Promise<PtySpawnResult>): void {
  const { output, exit } = pty.script
  if ((output === undefined || output.length === 0) && exit === undefined) return
  const isCurrentLive = (): boolean => pty.state === 'live' && state.ptys.get(pty.id) === pty
  for (const chunk of output ?? []) {
    state.deliveries.schedule(() => {
      if (isCurrentLive()) state.events.produceData(pty, chunk)
    })
  }
  if (exit !== undefined) {
    state.deliveries.schedule(() => {
      if (isCurrentLive()) state.events.endProcess(pty, exit)
    })
  }
  // Why: request the drain only once the spawn promise has resolved, so the caller's first
  // continuation always runs before any scripted event.
  void promise.then(state.deliveries.requestDrain, () => undefined)
}

function takePending(state: FakeProviderState, id: string | undefined, control: string): PendingSpawn {
  if (id !== undefined && typeof id !== 'string') throw new TypeError(`${control}: expected the \`id\` argument to be a string, got ${describeValue(id)}`)
  const pending = state.pendingSpawns
  const index = id === undefined ? 0 : pending.findIndex((entry) => entry.record.id === id)
  const entry = pending[index]
  if (index < 0 || entry === undefined) {
    throw new TypeError(
      `${control}: no hung spawn${id === undefined ? '' : ` with the id ${JSON.stringify(id)}`} is pending`,
    )
  }
  pending.splice(index, 1)
  entry.record.spawnPending = false
  return entry
}

/** `releaseSpawn`: resolve a hung spawn (the oldest, or the one with this id), then play its script. */
export function releaseFakeSpawn(state: FakeProviderState, id: string | undefined): void {
  const entry = takePending(state, id, 'releaseSpawn')
  // Why: a process that died while its reply was held was seen exiting before the reply.
  const result: PtySpawnResult =
    entry.record.state === 'live' ? entry.result : { ...entry.result, exitedBeforeSpawnReply: true }
  const promise = Promise.resolve(result)
  entry.resolve(result)
  scheduleAfterReply(state, entry.record, promise)
}

/** `failSpawn`: reject a hung spawn (the oldest, or the one with this id) and remove its process. */
export function failFakeSpawn(state: FakeProviderState, id: string | undefined, error: unknown): void {
  const entry = takePending(state, id, 'failSpawn')
  const pty = entry.record
  // Why: a provider whose spawn fails leaves nothing running and reports nothing.
  if (pty.state === 'live') pty.state = 'removed'
  settleHeldInput(pty, refusedWrite('provider_refused_write'))
  if (state.ptys.get(pty.id) === pty) state.ptys.delete(pty.id)
  entry.reject(error)
}

/** On dispose: reject every hung spawn (its process was already ended by dispose). */
export function rejectPendingFakeSpawns(state: FakeProviderState): void {
  for (const entry of state.pendingSpawns.splice(0)) {
    entry.record.spawnPending = false
    entry.reject(new FakePtyProviderDisposedError(state.name, 'spawn', entry.record.id))
  }
}
