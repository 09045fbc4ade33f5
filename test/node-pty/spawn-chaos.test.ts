import { AsyncLocalStorage } from 'node:async_hooks'
import { readdirSync, readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import type { PtySpawnOptions, PtySpawnReply } from 'ptykit/contracts'
import {
  createClaimedOwnerRegistry,
  createInMemoryPtyRuntime,
  createInMemorySlotStore,
  createRuntimePtySpawnState,
  executeRuntimePtySpawn,
  isPtySpawnAbortError,
  isPtySpawnError,
  slotStoreKey,
  type InMemoryPtyRuntime,
  type InMemorySlotStore,
  type PtySlotStore,
  type PtySpawnRuntime,
} from 'ptykit/spawn'
import { expectNoChildLeftBehind, isDead, waitFor } from './pty-test-support.js'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'

// A chaos run of the spawn pipeline as a host plugs it in: its own store and runtime (the in-memory
// ones behind hooks that fail at random), the node-pty provider (real processes), callers that abort
// at random moments, many spawns of one slot, session id or claim at once. After everything settles:
// every resolved spawn is a live process the controller tracks; every rejection is a typed error and
// left nothing behind (process, lease, handle, pending registration, slot binding, claim).

/** The seed of the plan (`CHAOS_SEED=… npx vitest run …` replays a failure's plan; `CHAOS_REPORT=1` prints the figures). */
const SEED = Number(process.env['CHAOS_SEED'] ?? 220)
/** Spawns in the run. */
const SPAWNS = Number(process.env['CHAOS_SPAWNS'] ?? 240)
/** Distinct slots, session ids and claim keys the spawns share (so many target one at a time). */
const SLOTS = 12
const SESSIONS = 12
const CLAIMS = 8
/** Spawns started together (a fork blocks the event loop; awaits in between overlap). */
const BATCH = 24
/** Tags the processes of this run in their environment, to count them from /proc. */
const TAG = `h220-chaos-${process.pid}-${SEED}`
/** How long a spawned process lives on its own: past the run; the test stops them all. */
const IDLE_SECONDS = 600

type FaultKind = 'throw' | 'reject' | 'late' | 'after_abort' | 'malformed' | 'throw_after'
/** A hook's failure, on its `call`-th call in the spawn (the second: a hook the controller calls again after the pipeline). */
type Fault = { hook: string; kind: FaultKind; delayMs: number; call: number }
type Target = { kind: 'slot' | 'session' | 'claim' | 'plain'; index: number }
type SpawnPlan = { target: Target; faults: Fault[]; abortAfterMs: number | null; handle: boolean; crashOwnerFirst: boolean }

// Hooks and the fault kinds each can answer with: async-capable hooks may reject or answer late;
// undo hooks (revokeHandle, cancelPendingPtyRegistration, clearPtyExecutionContext,
// undoPtyOutputSequenceSync) do their work and then throw (`throw_after`), so what is left behind
// is never the fault's own doing.
const HOOK_FAULTS: Record<string, readonly FaultKind[]> = {
  'runtime.acquireScopeSpawn': ['throw', 'reject', 'late', 'after_abort', 'malformed'],
  'runtime.admitHandle': ['throw'],
  'runtime.revokeHandle': ['throw_after'],
  'runtime.beginPtyRegistration': ['throw'],
  'runtime.cancelPendingPtyRegistration': ['throw_after'],
  'runtime.getPtyOutputSequence': ['throw', 'malformed'],
  'runtime.assertPtyRegistrationAllowed': ['throw'],
  'runtime.synchronizePtyOutputSequenceFromProvider': ['throw', 'malformed'],
  'runtime.undoPtyOutputSequenceSync': ['throw_after'],
  'runtime.preparePtyExecutionContext': ['throw'],
  'runtime.clearPtyExecutionContext': ['throw_after'],
  'runtime.commitPtyRegistration': ['throw'],
  'store.getLiveOwner': ['throw', 'malformed'],
  'store.getPersistedOwner': ['throw', 'reject', 'late', 'after_abort', 'malformed'],
  'store.bindOwner': ['throw', 'reject', 'late', 'after_abort'],
  'store.retireOwner': ['throw', 'reject', 'late', 'malformed'],
}

/** A fault in one of `hooks`. */
const faultArb = (hooks: string[]): fc.Arbitrary<Fault> => fc
  .constantFrom(...hooks)
  .chain((hook) => fc.record({ hook: fc.constant(hook), kind: fc.constantFrom(...(HOOK_FAULTS[hook] as FaultKind[])), delayMs: fc.integer({ min: 0, max: 30 }), call: fc.constantFrom(1, 1, 2) }))

const RUNTIME_HOOKS = Object.keys(HOOK_FAULTS).filter((hook) => hook.startsWith('runtime.'))
const STORE_HOOKS = Object.keys(HOOK_FAULTS).filter((hook) => hook.startsWith('store.'))

const targetArb: fc.Arbitrary<Target> = fc.oneof(
  fc.record({ kind: fc.constant('slot' as const), index: fc.nat(SLOTS - 1) }),
  fc.record({ kind: fc.constant('session' as const), index: fc.nat(SESSIONS - 1) }),
  fc.record({ kind: fc.constant('claim' as const), index: fc.nat(CLAIMS - 1) }),
  fc.record({ kind: fc.constant('plain' as const), index: fc.constant(0) }),
)

// A slot spawn's fault is as often in the store as in the runtime (only slot spawns call the store).
const planArb: fc.Arbitrary<SpawnPlan[]> = fc.array(
  targetArb.chain((target) =>
    fc.record({
      target: fc.constant(target),
      // Half the spawns meet no fault, a third one, the rest two.
      faults: ((fault: fc.Arbitrary<Fault>) =>
        fc.oneof({ weight: 3, arbitrary: fc.constant<Fault[]>([]) }, { weight: 2, arbitrary: fc.tuple(fault).map((f) => [...f]) }, { weight: 1, arbitrary: fc.tuple(fault, fault).map((f) => [...f]) }))(
        target.kind === 'slot' ? fc.oneof(faultArb(RUNTIME_HOOKS), faultArb(STORE_HOOKS)) : faultArb(RUNTIME_HOOKS),
      ),
      // One spawn in four aborts, at once (0) or a few ms in.
      abortAfterMs: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 40 }) }),
      handle: fc.boolean(),
      // The slot's owner crashes (SIGKILL from outside) just before: the spawn finds it absent.
      crashOwnerFirst: target.kind === 'slot' ? fc.boolean() : fc.constant(false),
    }),
  ),
  { minLength: SPAWNS, maxLength: SPAWNS },
)

/** Which spawn of the plan a hook call belongs to (the async context of its `controller.spawn`). */
const currentSpawn = new AsyncLocalStorage<{ index: number; calls: Map<string, number>; abort: AbortController | null }>()
/** The faults that fired, by plan index. */
const faultFired = new Map<number, Fault[]>()
/** Faults injected, by `hook/kind`. */
const injected = new Map<string, number>()

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function faultOf(plan: SpawnPlan[], hook: string): Fault | undefined {
  const context = currentSpawn.getStore()
  if (context === undefined) return undefined
  const call = (context.calls.get(hook) ?? 0) + 1
  context.calls.set(hook, call)
  const fault = plan[context.index]?.faults.find((f) => f.hook === hook && f.call === call)
  if (fault === undefined) return undefined
  faultFired.set(context.index, [...(faultFired.get(context.index) ?? []), fault])
  injected.set(`${hook}/${fault.kind}`, (injected.get(`${hook}/${fault.kind}`) ?? 0) + 1)
  return fault
}

const MALFORMED: Record<string, unknown> = {
  'runtime.getPtyOutputSequence': Number.NaN,
  'runtime.synchronizePtyOutputSequenceFromProvider': 'seventeen',
  'store.getLiveOwner': { ptyId: 5, hostId: 'local' },
  'store.getPersistedOwner': { ptyId: '', hostId: 'local' },
  'store.retireOwner': undefined,
}

/** Wrap each hook of `target` named in HOOK_FAULTS so it fails as the plan says, in its spawn's context. */
function faulty<T extends object>(target: T, prefix: 'runtime' | 'store', plan: SpawnPlan[]): T {
  const wrapped: Record<string, unknown> = {}
  for (const key of Object.keys(target)) {
    const value = (target as Record<string, unknown>)[key]
    if (typeof value !== 'function') continue
    const hook = `${prefix}.${key}`
    const inner = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args)
    if (HOOK_FAULTS[hook] === undefined) {
      wrapped[key] = inner
      continue
    }
    wrapped[key] = (...args: unknown[]) => {
      const fault = faultOf(plan, hook)
      if (fault === undefined) return inner(...args)
      const failure = new Error(`injected ${fault.kind} from ${hook}`)
      switch (fault.kind) {
        case 'throw':
          throw failure
        case 'throw_after':
          inner(...args)
          throw failure
        case 'reject':
          return sleep(fault.delayMs).then(() => Promise.reject(failure))
        case 'late':
          return sleep(fault.delayMs).then(() => inner(...args))
        case 'after_abort': {
          const abort = currentSpawn.getStore()?.abort
          return sleep(fault.delayMs).then(() => {
            abort?.abort(new Error(`aborted while ${hook} was out`))
            return inner(...args)
          })
        }
        case 'malformed':
          // A rebase the runtime refuses (`null`, which is allowed) half the time; a string otherwise.
          if (hook === 'runtime.synchronizePtyOutputSequenceFromProvider' && fault.delayMs % 2 === 1) return null
          if (hook === 'runtime.acquireScopeSpawn') {
            // The lease is taken and given back; the answer is not a release function.
            const release = inner(...args)
            if (typeof release === 'function') release()
            return 42
          }
          return MALFORMED[hook]
      }
    }
  }
  return wrapped as T
}

/** Live processes of this run: their environment carries TAG (read from /proc, independently of ptykit). */
function taggedProcesses(): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    let environ: string
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1')
    } catch {
      continue
    }
    if (environ.includes(`PTYKIT_CHAOS=${TAG}\0`) && !isDead(pid)) found.push(pid)
  }
  return found
}

/**
 * Every tagged process is one of `livePids` (no orphan), and there are `liveCount` of them — waited
 * for a little, as a process ending may still show in /proc.
 */
async function expectOnlyLivePtysRun(liveCount: number, livePids: ReadonlySet<number | null | undefined>): Promise<void> {
  const tagged = await waitFor(() => {
    const now = taggedProcesses()
    return now.length === liveCount ? now : undefined
  }, `${liveCount} tagged processes`, 5_000).catch(() => taggedProcesses())
  expect(tagged.filter((pid) => !livePids.has(pid)), 'orphaned processes').toEqual([])
  expect(tagged.length).toBe(liveCount)
}

/** The runtime holds no lease, admitted handle or pending registration; answers its snapshot. */
function expectRuntimeHoldsNothing(runtime: InMemoryPtyRuntime): ReturnType<InMemoryPtyRuntime['inspect']> {
  const snapshot = runtime.inspect()
  expect(snapshot.heldLeases).toEqual([])
  expect(snapshot.admittedHandles).toEqual([])
  expect(snapshot.pendingRegistrations).toEqual([])
  return snapshot
}

function optionsOf(plan: SpawnPlan, index: number, signal: AbortSignal | undefined): PtySpawnOptions {
  // One line of output (data events carry their sequence), then one process per PTY.
  const options: PtySpawnOptions = { file: '/bin/sh', args: ['-c', `echo up; exec sleep ${IDLE_SECONDS}`], env: { PTYKIT_CHAOS: TAG }, cols: 80, rows: 24 }
  const { target } = plan
  if (target.kind === 'slot') options.slot = { scopeId: 'chaos', key: `slot-${target.index}` }
  if (target.kind === 'session') options.sessionId = `chaos-session-${target.index}`
  if (target.kind === 'claim') options.claim = { scopeId: 'chaos', key: `claim-${target.index}` }
  if (target.kind !== 'claim') options.scopeId = 'chaos'
  if (plan.handle) options.preAllocatedHandle = `handle-${index}`
  if (signal !== undefined) options.signal = signal
  return options
}

let provider: NodePtyProvider | undefined
let controller: PtyController | undefined
let directProvider: NodePtyProvider | undefined
expectNoChildLeftBehind(async () => {
  await controller?.dispose()
  await provider?.dispose()
  await directProvider?.dispose()
})

/** Kill the live owner of chaos slot `index` from outside (SIGKILL), as a crash would; noted in `crashed`. */
function crashSlotOwner(store: InMemorySlotStore, index: number, pidById: ReadonlyMap<string, number>, crashed: Set<string>): void {
  const owner = store.inspect().live[slotStoreKey({ scopeId: 'chaos', key: `slot-${index}` })]
  const pid = owner === undefined ? undefined : pidById.get(owner.ptyId)
  if (typeof pid === 'number' && !isDead(pid)) {
    process.kill(pid, 'SIGKILL')
    crashed.add(owner!.ptyId)
  }
}

/** The spawn's abort controller, when its plan aborts it (at once or after `abortAfterMs`) or a fault answers after an abort; else `null`. */
function abortFor(spawnPlan: SpawnPlan): AbortController | null {
  const abort = spawnPlan.abortAfterMs !== null || spawnPlan.faults.some((f) => f.kind === 'after_abort') ? new AbortController() : null
  if (abort !== null && spawnPlan.abortAfterMs !== null) {
    if (spawnPlan.abortAfterMs === 0) abort.abort(new Error('aborted at once'))
    else setTimeout(() => abort.abort(new Error(`aborted after ${spawnPlan.abortAfterMs} ms`)), spawnPlan.abortAfterMs)
  }
  return abort
}

const unhandled = recordUnhandledRejections()

describe('spawn pipeline chaos (host store and runtime failing at random, real processes)', () => {
  it(`${SPAWNS} spawns, seed ${SEED}: nothing left behind by any failure`, async () => {
    const plan = fc.sample(planArb, { seed: SEED, numRuns: 1 })[0] as SpawnPlan[]
    injected.clear()
    faultFired.clear()
    const runtime: InMemoryPtyRuntime = createInMemoryPtyRuntime()
    const store: InMemorySlotStore = createInMemorySlotStore()
    const claims = createClaimedOwnerRegistry()
    provider = createNodePtyProvider()
    controller = createPtyController({
      provider,
      runtime: faulty<PtySpawnRuntime & InMemoryPtyRuntime>(runtime, 'runtime', plan),
      store: faulty<PtySlotStore>(store, 'store', plan),
      claims,
    })
    const controllerErrors: unknown[] = []
    controller.on('error', (error) => controllerErrors.push(error))
    const badSequences: unknown[] = []
    controller.on('data', (event) => {
      if (!(typeof event.seq === 'number' && Number.isFinite(event.seq) && event.seq >= 0)) badSequences.push([event.ptyId, event.seq])
    })
    const live = controller
    const crashed = new Set<string>()
    const pidById = new Map<string, number>()

    type Settled = { index: number; reply?: PtySpawnReply; error?: unknown }
    const settled: Settled[] = []
    for (let start = 0; start < plan.length; start += BATCH) {
      const batch = plan.slice(start, start + BATCH).map((spawnPlan, offset) => {
        const index = start + offset
        if (spawnPlan.crashOwnerFirst) crashSlotOwner(store, spawnPlan.target.index, pidById, crashed)
        const abort = abortFor(spawnPlan)
        return currentSpawn.run({ index, calls: new Map(), abort }, () =>
          live.spawn(optionsOf(spawnPlan, index, abort?.signal)).then(
            (reply): Settled => ({ index, reply }),
            (error: unknown): Settled => ({ index, error }),
          ),
        )
      })
      settled.push(...(await Promise.all(batch)))
      for (const s of settled) if (typeof s.reply?.pid === 'number') pidById.set(s.reply.id, s.reply.pid)
    }
    // Let late undos (a shutdown's exit, a late retire) land.
    await sleep(100)

    const resolved = settled.filter((s) => s.reply !== undefined)
    const rejected = settled.filter((s) => s.error !== undefined)
    const codes = new Map<string, number>()
    for (const s of rejected) {
      const key = isPtySpawnError(s.error) ? `${s.error.code}/${s.error.outcome}` : `untyped: ${String(s.error)}`
      codes.set(key, (codes.get(key) ?? 0) + 1)
    }
    // What should be live: every resolved spawn's PTY, except the owners the plan crashed.
    const liveIds = new Set(resolved.map((s) => s.reply!.id).filter((id) => !crashed.has(id)))
    const report = {
      seed: SEED,
      spawns: settled.length,
      ownersCrashed: crashed.size,
      aborted: plan.filter((p) => p.abortAfterMs !== null).length,
      resolved: resolved.length,
      rejected: rejected.length,
      distinctLivePtys: liveIds.size,
      injected: Object.fromEntries([...injected].sort()),
      rejections: Object.fromEntries([...codes].sort()),
    }
    if (process.env['CHAOS_REPORT'] !== undefined) console.log(JSON.stringify({ ...report, controllerErrors: controllerErrors.length }, null, 1))

    // Every rejection is typed.
    expect(rejected.filter((s) => !isPtySpawnError(s.error)).map((s) => String(s.error))).toEqual([])
    // A rejection caused by an injected fault carries it: as the cause, or among the AggregateError's.
    const causes = (error: unknown): unknown[] => {
      const found: unknown[] = []
      for (let e: unknown = error; e !== undefined && e !== null && found.length < 10; e = (e as { cause?: unknown }).cause) {
        found.push(e)
        if (e instanceof AggregateError) found.push(...e.errors)
      }
      return found
    }
    // (A fault that answers late or malformed may be harmless; one that throws or rejects is not.)
    const THROWING: readonly FaultKind[] = ['throw', 'reject', 'throw_after']
    const unnamed = rejected
      .filter((s) => (faultFired.get(s.index) ?? []).some((f) => THROWING.includes(f.kind)) && !isPtySpawnAbortError(s.error))
      .filter((s) => !causes(s.error).some((e) => e instanceof Error && e.message.includes('injected')))
      .map((s) => `${s.index} ${JSON.stringify(faultFired.get(s.index))}: ${(s.error as Error).message}`)
    expect(unnamed, 'rejections that do not carry the injected failure').toEqual([])
    // Every resolved spawn is a live process the controller tracks.
    const inventory = live.inventory()
    expect([...liveIds].filter((id) => !inventory.allLivePtyIds.has(id))).toEqual([])
    for (const s of resolved) {
      if (crashed.has(s.reply!.id)) continue
      const pid = s.reply!.pid
      expect(typeof pid === 'number' && !isDead(pid), `spawn ${s.index} (${s.reply!.id}) has a live pid`).toBe(true)
    }
    // No process beyond those: each tracked PTY is one tagged process.
    await expectOnlyLivePtysRun(liveIds.size, new Set(resolved.filter((s) => !crashed.has(s.reply!.id)).map((s) => s.reply!.pid)))
    // Nothing held: leases, handles, pending registrations; registrations, bindings and claims name live PTYs only.
    const snapshot = expectRuntimeHoldsNothing(runtime)
    expect(snapshot.registeredPtys.map((r) => r.ptyId).filter((id) => !liveIds.has(id))).toEqual([])
    const bindings = store.inspect()
    const owners = [...Object.values(bindings.live), ...Object.values(bindings.persisted)]
    // (A crashed owner's binding stays until a spawn of its slot proves it absent: the second round below.)
    const strayBindings = owners.map((o) => o.ptyId).filter((id) => !liveIds.has(id) && !crashed.has(id))
    expect(strayBindings, 'slot bindings of no live PTY').toEqual([])
    expect(claims.owners().map((o) => o.ptyId).filter((id) => !liveIds.has(id))).toEqual([])
    expect(unhandled).toEqual([])
    expect(badSequences, 'data events whose seq is not a sequence').toEqual([])
    // No spawn of a session id is still "coming" in the controller: a kill of an id nothing runs under has nothing to stop.
    const idle = Array.from({ length: SESSIONS }, (_, i) => `chaos-session-${i}`).filter((id) => !liveIds.has(id) && !crashed.has(id) && live.hasPty(id) !== true)
    expect(idle.filter((id) => live.kill(id)), 'session ids a kill still finds something to stop under').toEqual([])

    // Nothing left locked: a second spawn of each slot, session id and claim succeeds.
    const again = await Promise.all([
      ...Array.from({ length: SLOTS }, (_, i) => live.spawn(optionsOf({ target: { kind: 'slot', index: i }, faults: [], abortAfterMs: null, handle: false, crashOwnerFirst: false }, -1, undefined))),
      ...Array.from({ length: CLAIMS }, (_, i) => live.spawn(optionsOf({ target: { kind: 'claim', index: i }, faults: [], abortAfterMs: null, handle: false, crashOwnerFirst: false }, -1, undefined))),
    ].map((p) => p.then(() => null, (error: unknown) => String(error))))
    expect(again.filter((e) => e !== null)).toEqual([])
    for (let i = 0; i < SESSIONS; i++) {
      const id = `chaos-session-${i}`
      if (live.hasPty(id) === true) continue
      await expect(live.spawn(optionsOf({ target: { kind: 'session', index: i }, faults: [], abortAfterMs: null, handle: false, crashOwnerFirst: false }, -1, undefined))).resolves.toMatchObject({ id })
    }

    await live.dispose()
    await waitFor(() => (taggedProcesses().length === 0 ? true : undefined), 'every tagged process to end', 10_000)
  }, 120_000)

  it(`${SPAWNS} spawns through the pipeline alone (the host's own wiring, as docs/spawn-pipeline.md shows), seed ${SEED}`, async () => {
    const plan = fc.sample(planArb, { seed: SEED + 1, numRuns: 1 })[0] as SpawnPlan[]
    injected.clear()
    faultFired.clear()
    const runtime = createInMemoryPtyRuntime()
    const store = createInMemorySlotStore()
    const claims = createClaimedOwnerRegistry()
    const nodePty = createNodePtyProvider()
    directProvider = nodePty
    // The host reports every exit to its runtime (the controller's job, done here by the host).
    nodePty.onExit((event) => runtime.notePtyExit(event.id, event.incarnationId))
    const deps = {
      resolveProvider: (hostId: string) => (hostId === 'local' ? nodePty : undefined),
      runtime: faulty<PtySpawnRuntime & InMemoryPtyRuntime>(runtime, 'runtime', plan),
      store: faulty<PtySlotStore>(store, 'store', plan),
      claims,
    }
    // The pipeline alone does not serialize one slot's spawns (or one session id's): the host does.
    const turns = new Map<string, Promise<unknown>>()
    const inTurn = <T>(key: string | undefined, work: () => Promise<T>): Promise<T> => {
      if (key === undefined) return work()
      const run = (turns.get(key) ?? Promise.resolve()).then(work, work)
      turns.set(key, run.catch(() => undefined))
      return run
    }
    type Settled = { index: number; id?: string; pid?: number | null; reconciled?: unknown; error?: unknown }
    const settled: Settled[] = []
    const crashed = new Set<string>()
    const pidById = new Map<string, number>()
    for (let start = 0; start < plan.length; start += BATCH) {
      const batch = plan.slice(start, start + BATCH).map((spawnPlan, offset) => {
        const index = start + offset
        const { target } = spawnPlan
        if (spawnPlan.crashOwnerFirst) crashSlotOwner(store, target.index, pidById, crashed)
        const abort = abortFor(spawnPlan)
        const turnKey = target.kind === 'slot' ? `slot-${target.index}` : target.kind === 'session' ? `session-${target.index}` : undefined
        return currentSpawn.run({ index, calls: new Map(), abort }, () =>
          inTurn(turnKey, () => executeRuntimePtySpawn(createRuntimePtySpawnState(deps, optionsOf(spawnPlan, index, abort?.signal)))).then(
            (outcome): Settled => ({ index, id: outcome.result.id, pid: outcome.result.pid ?? null, reconciled: outcome.reconciledSequence }),
            (error: unknown): Settled => ({ index, error }),
          ),
        )
      })
      settled.push(...(await Promise.all(batch)))
      for (const s of settled) if (typeof s.pid === 'number' && s.id !== undefined) pidById.set(s.id, s.pid)
    }
    await sleep(100)

    const resolved = settled.filter((s) => s.id !== undefined)
    const rejected = settled.filter((s) => s.error !== undefined)
    const liveIds = new Set(resolved.map((s) => s.id!).filter((id) => !crashed.has(id)))
    const codes = new Map<string, number>()
    for (const s of rejected) {
      const key = isPtySpawnError(s.error) ? `${s.error.code}/${s.error.outcome}` : `untyped: ${String(s.error)}`
      codes.set(key, (codes.get(key) ?? 0) + 1)
    }
    if (process.env['CHAOS_REPORT'] !== undefined) console.log(JSON.stringify({ mode: 'pipeline alone', seed: SEED + 1, spawns: settled.length, ownersCrashed: crashed.size, resolved: resolved.length, rejected: rejected.length, distinctLivePtys: liveIds.size, injected: Object.fromEntries([...injected].sort()), rejections: Object.fromEntries([...codes].sort()) }, null, 1))

    expect(rejected.filter((s) => !isPtySpawnError(s.error)).map((s) => String(s.error))).toEqual([])
    // Every resolved spawn's PTY runs and is registered (a re-attach or adoption shares its creator's pid).
    for (const s of resolved) {
      if (crashed.has(s.id!)) continue
      expect(runtime.isPtyRegistered(s.id!), `spawn ${s.index}: ${s.id} registered`).toBe(true)
    }
    // The reconciled sequence an outcome publishes is one, or null (refused), or absent.
    const isSequence = (value: unknown) => value === undefined || value === null || (typeof value === 'number' && Number.isFinite(value) && value >= 0)
    expect(resolved.filter((s) => !isSequence(s.reconciled)).map((s) => [s.index, s.reconciled]), 'outcomes with a malformed reconciledSequence').toEqual([])
    const livePids = new Set([...liveIds].map((id) => pidById.get(id)))
    expect([...livePids].filter((pid) => pid === undefined || isDead(pid)), 'resolved PTYs not running').toEqual([])
    await expectOnlyLivePtysRun(liveIds.size, livePids)
    expectRuntimeHoldsNothing(runtime)
    const bindings = store.inspect()
    const owners = [...Object.values(bindings.live), ...Object.values(bindings.persisted)]
    expect(owners.map((o) => o.ptyId).filter((id) => !liveIds.has(id) && !crashed.has(id)), 'slot bindings of no live PTY').toEqual([])
    expect(claims.owners().map((o) => o.ptyId).filter((id) => !liveIds.has(id) && !crashed.has(id)), 'claims held for no live PTY').toEqual([])
    expect(unhandled).toEqual([])

    // Nothing left locked: a second spawn of each slot and claim succeeds.
    const again = await Promise.all(
      [
        ...Array.from({ length: SLOTS }, (_, i) => ({ target: { kind: 'slot' as const, index: i }, faults: [], abortAfterMs: null, handle: false, crashOwnerFirst: false })),
        ...Array.from({ length: CLAIMS }, (_, i) => ({ target: { kind: 'claim' as const, index: i }, faults: [], abortAfterMs: null, handle: false, crashOwnerFirst: false })),
      ].map((p) => executeRuntimePtySpawn(createRuntimePtySpawnState(deps, optionsOf(p, -1, undefined))).then(() => null, (error: unknown) => String(error))),
    )
    expect(again.filter((e) => e !== null)).toEqual([])

    await nodePty.dispose()
    await waitFor(() => (taggedProcesses().length === 0 ? true : undefined), 'every tagged process to end', 10_000)
  }, 120_000)
})
