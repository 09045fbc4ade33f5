import { describeValue } from '../contracts/describe-value.js'
import { LOCAL_EXECUTION_HOST_ID, type ExecutionHostId, type PtyIncarnationId } from '../contracts/index.js'
import { createFakeDeliveryQueue, type FakeDeliveryQueue } from './fake-delivery-queue.js'
import { createFakePtyEvents, type FakePtyEvents } from './fake-pty-events.js'
import type { FakeProviderCall, FakeProviderMethod, FakePtyProviderOptions } from './fake-pty-provider-types.js'
import type { FakePtyRecord, PendingSpawn } from './fake-pty-record.js'
import { assertFakeSpawnScript, type FakeSpawnScript } from './fake-spawn-script.js'

// The state one fake provider shares between its spawning, its `PtyProvider` methods and its test
// controls: the PTY table, the scripts and hung spawns waiting, the call log, the event side and
// the delivery queue. Each of those modules is a set of functions over this one object.

/** Everything one fake provider knows; created once per `createFakePtyProvider` call. */
export type FakeProviderState = {
  /** The options as the caller passed them (some are read at each use, as before the split). */
  readonly options: FakePtyProviderOptions
  readonly name: string
  readonly idPrefix: string
  readonly hostId: ExecutionHostId
  readonly authoritativeListings: boolean
  /** Every `PtyProvider` method call, in order (cleared in place by `clearCalls`). */
  readonly calls: FakeProviderCall[]
  /** The current record behind each PTY id ever spawned. */
  readonly ptys: Map<string, FakePtyRecord>
  /** Every incarnation ever minted under each id, oldest first. */
  readonly incarnationsById: Map<string, PtyIncarnationId[]>
  /**
   * Incarnations a script's reused id replaced while they ran: the fake lost track of them (as a
   * daemon that lost track of a process would), so whether they still run is unknown.
   */
  readonly replacedIncarnations: Set<PtyIncarnationId>
  /** Scripts queued with `scriptNextSpawn`, oldest first. */
  readonly scriptQueue: FakeSpawnScript[]
  /** Spawns a `hang` script holds, oldest first. */
  readonly pendingSpawns: PendingSpawn[]
  readonly events: FakePtyEvents
  readonly deliveries: FakeDeliveryQueue
  /** While set, `listProcesses` rejects with this error. */
  listingFailure: { error: unknown } | undefined
  /** PTY ids minted so far (the next default id is `${idPrefix}${ptyCount + 1}`). */
  ptyCount: number
  /** Incarnations minted so far, across every id. */
  incarnationCount: number
  disposed: boolean
  /**
   * Set by `detach()`: the fake let go of its PTYs, which run on where it no longer sees them —
   * nothing of them reaches a listener, and its calls answer as the pty host provider's after
   * `detach()` (see `fake-provider-methods.ts`).
   */
  detached: boolean
  /**
   * The incarnations whose exit a listener had heard of when `detach()` was called (an exit still
   * held behind paused output had not been): after the detach they alone are known gone — a stop
   * of one resolves, its liveness is `false`, a write is refused `pty_exited`.
   */
  readonly exitsSeenBeforeDetach: Set<FakePtyRecord>
  /** Append a call to `calls`, stamped with the injected clock. */
  record(method: FakeProviderMethod, args: readonly unknown[]): void
}

/** Check the options and create the empty state of a fake provider. */
export function createFakeProviderState(options: FakePtyProviderOptions): FakeProviderState {
  const name = options.name ?? 'fake'
  const idPrefix = options.idPrefix ?? 'fake-'
  const hostId = options.hostId ?? LOCAL_EXECUTION_HOST_ID
  const authoritativeListings = options.authoritativeListings ?? true
  const scheduling = options.scheduling ?? 'macrotask'
  if (typeof name !== 'string') throw new TypeError(`Expected the \`name\` option to be a string, got ${describeValue(name)}`)
  if (typeof idPrefix !== 'string') {
    throw new TypeError(`Expected the \`idPrefix\` option to be a string, got ${describeValue(idPrefix)}`)
  }
  if (scheduling !== 'macrotask' && scheduling !== 'microtask' && scheduling !== 'manual') {
    throw new TypeError(
      `Expected the \`scheduling\` option to be 'macrotask', 'microtask' or 'manual', got ${describeValue(scheduling)}`,
    )
  }
  for (const name of ['authoritativeListings', 'hostReportsChildExitStatus', 'foregroundProcessEvidence'] as const) {
    const value: unknown = options[name]
    if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`Expected the \`${name}\` option to be a boolean or undefined, got ${describeValue(value)}`)
  }
  if (typeof hostId !== 'string') throw new TypeError(`Expected the \`hostId\` option to be a string, got ${describeValue(hostId)}`)
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new TypeError(`Expected the \`now\` option to be a function or undefined, got ${describeValue(options.now)}`)
  }
  if (options.defaultScript !== undefined) assertFakeSpawnScript(options.defaultScript, 'the `defaultScript` option')
  let tick = 0
  const now = options.now ?? ((): number => ++tick)
  const calls: FakeProviderCall[] = []
  return {
    options,
    name,
    idPrefix,
    hostId,
    authoritativeListings,
    calls,
    ptys: new Map(),
    incarnationsById: new Map(),
    replacedIncarnations: new Set(),
    scriptQueue: [],
    pendingSpawns: [],
    events: createFakePtyEvents(() => options.hostReportsChildExitStatus),
    deliveries: createFakeDeliveryQueue(scheduling),
    listingFailure: undefined,
    ptyCount: 0,
    incarnationCount: 0,
    disposed: false,
    detached: false,
    exitsSeenBeforeDetach: new Set(),
    record(method, args) {
      calls.push({ method, args, at: now() })
    },
  }
}

/** The record behind `id`, or a `TypeError` naming the test control and the id. */
export function requireFakePty(state: FakeProviderState, id: string, control: string): FakePtyRecord {
  if (typeof id !== 'string') throw new TypeError(`${control}: expected the \`id\` argument to be a string, got ${describeValue(id)}`)
  const pty = state.ptys.get(id)
  if (pty === undefined) throw new TypeError(`${control}: no fake PTY has the id ${JSON.stringify(id)}`)
  return pty
}

/**
 * What `hasPty`/`probeLiveness` answer: the scripted override, else live ⇒ `true`, else proven
 * absence or `null`. Asked about an incarnation (`incarnationId`) the id does not hold now: never
 * `true`; `false` with authoritative listings (the fake saw it end, or never minted it), except for
 * one a reused id replaced while it ran (`null`: the fake lost track of it), else `null`. Once the
 * fake is detached: `false` for an incarnation whose exit was heard before the detach, else `null`.
 */
export function fakeLivenessOf(state: FakeProviderState, id: string, incarnationId?: PtyIncarnationId): boolean | null {
  const pty = state.ptys.get(id)
  // Detached: blind — `false` only for an incarnation whose exit was heard before the detach.
  if (state.detached) return pty !== undefined && (incarnationId === undefined || pty.incarnationId === incarnationId) && state.exitsSeenBeforeDetach.has(pty) ? false : null
  if (incarnationId !== undefined && pty?.incarnationId !== incarnationId) {
    if (state.replacedIncarnations.has(incarnationId)) return null
    return state.authoritativeListings ? false : null
  }
  if (pty !== undefined && pty.liveness !== undefined) return pty.liveness
  if (pty !== undefined && pty.state === 'live') return true
  return state.authoritativeListings ? false : null
}
