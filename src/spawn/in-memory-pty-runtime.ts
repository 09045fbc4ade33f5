import { describeValue } from '../contracts/describe-value.js'
import type { ProviderSequence, PtyIncarnationId } from '../contracts/index.js'
import { PtyExitedDuringStartError } from './pty-exited-during-start-error.js'
import { rebaseOutputSequence, type OutputSequenceState } from './rebase-output-sequence.js'
import { ScopeLeaseTable, type ScopeLeaseView } from './scope-lease-table.js'
import {
  type PtyExecutionContext,
  type PtySpawnRuntime,
  type ScopeSpawnLeaseRelease,
} from './types.js'

type Inc = PtyIncarnationId | null

/** A PTY id with an incarnation (`null`: any / not attested), as plain data. */
export type PtyIdentityView = {
  /** The PTY id. */
  ptyId: string
  /** The incarnation; `null` is the wildcard (any incarnation of the id). */
  incarnationId: string | null
}

/** One output-sequence row of an {@link InMemoryPtyRuntimeSnapshot}. */
export type OutputSequenceView = {
  /** The PTY id. */
  ptyId: string
  /** The count of raw output chars admitted. */
  sequence: number
  /** Whether a provider sequence was applied. */
  initialized: boolean
}

/** One execution-context row of an {@link InMemoryPtyRuntimeSnapshot}. */
export type ExecutionContextView = {
  /** The PTY id. */
  ptyId: string
  /** Its prepared context. */
  context: PtyExecutionContext
}

/** A plain, JSON-safe snapshot of the in-memory runtime, for tests and diagnostics. */
export type InMemoryPtyRuntimeSnapshot = {
  /** Scopes with a held lease or a waiter. */
  heldLeases: ScopeLeaseView[]
  /** Spawns in flight, one row per pending registration (an id may appear more than once). */
  pendingRegistrations: PtyIdentityView[]
  /** Exits recorded while a registration was pending. */
  earlyExitFences: PtyIdentityView[]
  /** Pre-allocated handles currently trusted, one row per admission. */
  admittedHandles: string[]
  /** Registered (published) PTYs. */
  registeredPtys: PtyIdentityView[]
  /** Output sequences per PTY. */
  outputSequences: OutputSequenceView[]
  /** Execution contexts per PTY. */
  executionContexts: ExecutionContextView[]
}

/**
 * The default runtime: every {@link PtySpawnRuntime} hook (all present, so a caller need not use
 * `?.`) plus what a controller needs around them.
 */
export type InMemoryPtyRuntime = Required<PtySpawnRuntime> & {
  /**
   * Take the scope's lock exclusively (maintenance: sleep, delete): waits for the spawns holding
   * shared leases, and spawns that arrive later wait for it.
   */
  acquireScopeExclusive(scopeId: string | undefined): Promise<ScopeSpawnLeaseRelease>
  /**
   * Count `chars` raw output chars admitted for the PTY; returns the new sequence.
   *
   * @throws TypeError when `chars` is not a non-negative integer.
   */
  notePtyOutput(ptyId: string, chars: number): number
  /**
   * The PTY's death is proven: drop its output sequence and execution context, unless the id is
   * registered or pending again (a respawn). A later spawn of the id starts a new stream at 0.
   */
  forgetPty(ptyId: string): void
  /** Whether a pre-allocated handle is currently admitted (for an environment builder). */
  isHandleAdmitted(handle: string): boolean
  /** Whether a PTY is registered (published and not yet exited). */
  isPtyRegistered(ptyId: string): boolean
  /** The execution context prepared for a PTY, if any. */
  getPtyExecutionContext(ptyId: string): PtyExecutionContext | undefined
  /** A plain snapshot of every table, sorted, for equality checks in tests. */
  inspect(): InMemoryPtyRuntimeSnapshot
}

/** Two incarnations collide when either is the wildcard or they are equal. */
function collide(a: Inc, b: Inc): boolean {
  return a === null || b === null || a === b
}

function byId<T extends { ptyId: string }>(a: T, b: T): number {
  return a.ptyId < b.ptyId ? -1 : a.ptyId > b.ptyId ? 1 : 0
}

function removeOne(list: Inc[], incarnationId: Inc): boolean {
  let index = list.indexOf(incarnationId)
  if (index < 0) {
    index = list.findIndex((entry) => collide(entry, incarnationId))
  }
  if (index < 0) {
    return false
  }
  list.splice(index, 1)
  return true
}

/**
 * Create the default in-memory runtime a small host can use as it is:
 *
 * - **scope leases**: shared per scope for spawns, `acquireScopeExclusive` (see {@link InMemoryPtyRuntime})
 *   for maintenance; scopes never serialize each other;
 * - **admitted handles**: counted, so two spawns admitting one handle do not revoke each other;
 * - **pending registrations** with a wildcard incarnation (`null`) and **early-exit fences**: an exit
 *   (`notePtyExit`) of a colliding incarnation while pending sets a fence, and the admission gate
 *   then throws a `PtyExitedDuringStartError` (see {@link isPtyExitedDuringStartError}); two different attested incarnations do not
 *   collide (the stale fence is dropped); cancelling the last pending registration of an id drops
 *   its fences;
 * - **registered PTYs**: `commitPtyRegistration` re-checks the gate, consumes one pending
 *   registration and publishes; `notePtyExit` unregisters a colliding incarnation;
 *   `forgetPty` drops an exited id's output sequence and execution context (so a long-lived host
 *   does not keep a row per PTY it ever ran), unless the id is registered or pending again;
 * - **output sequences**: `notePtyOutput` counts raw chars; the provider rebase follows
 *   the pipeline's sequence rebase (rule SP3 of docs/architecture.md) and can be undone once per sync;
 * - **execution contexts**.
 */
export function createInMemoryPtyRuntime(): InMemoryPtyRuntime {
  const leases = new ScopeLeaseTable()
  const handles = new Map<string, number>()
  const pending = new Map<string, Inc[]>()
  const fences = new Map<string, Inc[]>()
  const registered = new Map<string, Inc>()
  const sequences = new Map<string, OutputSequenceState>()
  const sequencesBeforeSync = new Map<string, OutputSequenceState | undefined>()
  const contexts = new Map<string, PtyExecutionContext>()

  const dropFencesIfIdle = (ptyId: string): void => {
    if ((pending.get(ptyId)?.length ?? 0) === 0) {
      pending.delete(ptyId)
      fences.delete(ptyId)
    }
  }

  /** One pending registration of the id ends (cancelled or committed); its fences go with the last one. */
  const endPending = (ptyId: string, incarnationId: PtyIncarnationId | null | undefined): void => {
    const list = pending.get(ptyId)
    if (list !== undefined) {
      removeOne(list, incarnationId ?? null)
    }
    dropFencesIfIdle(ptyId)
  }

  const assertAllowed = (ptyId: string, incarnationId: PtyIncarnationId | undefined): void => {
    const inc = incarnationId ?? null
    const list = fences.get(ptyId)
    if (list === undefined) {
      return
    }
    const hit = list.find((fence) => collide(fence, inc))
    // Why: a fence of another attested incarnation is about an older process; drop it.
    const kept = list.filter((fence) => collide(fence, inc))
    if (kept.length === 0) {
      fences.delete(ptyId)
    } else {
      fences.set(ptyId, kept)
    }
    if (hit !== undefined) {
      throw new PtyExitedDuringStartError(ptyId, hit)
    }
  }

  return {
    acquireScopeSpawn: (scopeId) => leases.acquireShared(scopeId),
    acquireScopeExclusive: (scopeId) => leases.acquireExclusive(scopeId),
    admitHandle(handle) {
      handles.set(handle, (handles.get(handle) ?? 0) + 1)
    },
    revokeHandle(handle) {
      const count = handles.get(handle) ?? 0
      if (count <= 1) {
        handles.delete(handle)
      } else {
        handles.set(handle, count - 1)
      }
    },
    isHandleAdmitted: (handle) => handles.has(handle),
    beginPtyRegistration(ptyId, incarnationId) {
      const list = pending.get(ptyId) ?? []
      list.push(incarnationId ?? null)
      pending.set(ptyId, list)
    },
    cancelPendingPtyRegistration(ptyId, incarnationId) {
      endPending(ptyId, incarnationId)
    },
    assertPtyRegistrationAllowed(ptyId, incarnationId) {
      assertAllowed(ptyId, incarnationId)
    },
    commitPtyRegistration(ptyId, incarnationId) {
      assertAllowed(ptyId, incarnationId)
      endPending(ptyId, incarnationId)
      registered.set(ptyId, incarnationId ?? null)
    },
    notePtyExit(ptyId, incarnationId) {
      const inc = incarnationId ?? null
      const list = pending.get(ptyId)
      if (list !== undefined && list.some((entry) => collide(entry, inc))) {
        const fenceList = fences.get(ptyId) ?? []
        if (!fenceList.includes(inc)) {
          fenceList.push(inc)
        }
        fences.set(ptyId, fenceList)
      }
      if (registered.has(ptyId) && collide(registered.get(ptyId) ?? null, inc)) {
        registered.delete(ptyId)
      }
    },
    forgetPty(ptyId) {
      // Why not in `notePtyExit`: an exit the host could not vouch for may be followed by a
      // re-attach to the same, still running process, which needs its sequence and context.
      if (registered.has(ptyId) || (pending.get(ptyId)?.length ?? 0) > 0) {
        return
      }
      sequences.delete(ptyId)
      sequencesBeforeSync.delete(ptyId)
      contexts.delete(ptyId)
    },
    isPtyRegistered: (ptyId) => registered.has(ptyId),
    getPtyOutputSequence: (ptyId) => sequences.get(ptyId)?.sequence ?? 0,
    notePtyOutput(ptyId, chars) {
      if (!Number.isInteger(chars) || chars < 0) {
        throw new TypeError(`Expected the \`chars\` option to be a non-negative integer, got ${describeValue(chars)}`)
      }
      // Called once per output chunk: the state is updated in place (no object per chunk). Nothing
      // else holds it: a sync's undo keeps its own copy (`sequencesBeforeSync`), `inspect` copies.
      const state = sequences.get(ptyId)
      if (state === undefined) {
        sequences.set(ptyId, { sequence: chars, initialized: false })
        return chars
      }
      state.sequence += chars
      return state.sequence
    },
    synchronizePtyOutputSequenceFromProvider(ptyId: string, providerSequence: ProviderSequence, sequenceBeforeSpawn: number) {
      const before = sequences.get(ptyId)
      const next = rebaseOutputSequence(before, providerSequence, sequenceBeforeSpawn)
      if (next === null) {
        return null
      }
      sequencesBeforeSync.set(ptyId, before === undefined ? undefined : { ...before })
      sequences.set(ptyId, next)
      return next.sequence
    },
    undoPtyOutputSequenceSync(ptyId) {
      if (!sequencesBeforeSync.has(ptyId)) {
        return
      }
      const before = sequencesBeforeSync.get(ptyId)
      sequencesBeforeSync.delete(ptyId)
      if (before === undefined) {
        sequences.delete(ptyId)
      } else {
        sequences.set(ptyId, before)
      }
    },
    preparePtyExecutionContext(ptyId, context) {
      contexts.set(ptyId, { ...context })
    },
    clearPtyExecutionContext(ptyId) {
      contexts.delete(ptyId)
    },
    getPtyExecutionContext(ptyId) {
      const context = contexts.get(ptyId)
      return context === undefined ? undefined : { ...context }
    },
    inspect() {
      const rows = (map: Map<string, Inc[]>): PtyIdentityView[] =>
        [...map]
          .flatMap(([ptyId, list]) => list.map((incarnationId) => ({ ptyId, incarnationId: incarnationId as string | null })))
          .sort((a, b) => byId(a, b) || String(a.incarnationId).localeCompare(String(b.incarnationId)))
      return {
        heldLeases: leases.view(),
        pendingRegistrations: rows(pending),
        earlyExitFences: rows(fences),
        admittedHandles: [...handles].flatMap(([handle, count]) => Array.from({ length: count }, () => handle)).sort(),
        registeredPtys: [...registered].map(([ptyId, incarnationId]) => ({ ptyId, incarnationId: incarnationId as string | null })).sort(byId),
        outputSequences: [...sequences].map(([ptyId, state]) => ({ ptyId, ...state })).sort(byId),
        executionContexts: [...contexts].map(([ptyId, context]) => ({ ptyId, context: { ...context } })).sort(byId),
      }
    },
  }
}
