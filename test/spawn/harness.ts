import type { PtyProvider, PtySpawnOptions } from '../../src/contracts/index.js'
import {
  createClaimedOwnerRegistry,
  createInMemoryPtyRuntime,
  createInMemorySlotStore,
  createRuntimePtySpawnState,
  executeRuntimePtySpawn,
  type ClaimedOwnerRegistry,
  type InMemoryPtyRuntime,
  type InMemorySlotStore,
  type PtySlotStore,
  type PtySpawnDeps,
  type PtySpawnOutcome,
  type PtySpawnRuntime,
  type RuntimePtySpawnState,
} from '../../src/spawn/index.js'
import { createFakePtyProvider, type FakePtyProvider, type FakePtyProviderOptions } from '../../src/testing/index.js'

/** One recorded side effect: `runtime.x`, `store.x`, `provider.x`, `claims.x`, with its arguments. */
export type LogEntry = [string, ...unknown[]]

/** Wrap every function-valued member of `target` so each call is logged as `${prefix}.${name}`. */
export function recording<T extends object>(target: T, prefix: string, log: LogEntry[], only?: readonly string[]): T {
  const wrapped: Record<string, unknown> = {}
  for (const key of Object.keys(target) as (keyof T & string)[]) {
    const value = target[key]
    if (typeof value === 'function' && (only === undefined || only.includes(key))) {
      wrapped[key] = (...args: unknown[]) => {
        log.push([`${prefix}.${key}`, ...args])
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    } else {
      Object.defineProperty(wrapped, key, { get: () => target[key], enumerable: true })
    }
  }
  return wrapped as T
}

/**
 * Wrap a runtime for recording: every hook call is logged, and so is the release of each scope
 * lease (`lease.release`), which is a returned function rather than a hook.
 */
export function recordingRuntime(runtime: InMemoryPtyRuntime, log: LogEntry[]): InMemoryPtyRuntime {
  const recorded = recording(runtime, 'runtime', log)
  return {
    ...recorded,
    acquireScopeSpawn(scopeId) {
      log.push(['runtime.acquireScopeSpawn', scopeId])
      const release = runtime.acquireScopeSpawn(scopeId)
      const wrap = (inner: () => void) => () => {
        log.push(['lease.release', scopeId])
        inner()
      }
      return release instanceof Promise ? release.then(wrap) : wrap(release)
    },
  }
}

/** The provider methods whose calls are side effects of the pipeline (reads are left out of logs). */
export const PROVIDER_EFFECTS = ['spawn', 'shutdown'] as const

/** A fake provider, the in-memory defaults, and the controller-style exit wiring. */
export type Harness = {
  provider: FakePtyProvider
  runtime: InMemoryPtyRuntime
  store: InMemorySlotStore
  claims: ClaimedOwnerRegistry
  deps: PtySpawnDeps
  log: LogEntry[]
  spawn(options: PtySpawnOptions): Promise<PtySpawnOutcome>
  state(options: PtySpawnOptions): RuntimePtySpawnState
}

/** Options of {@link createHarness}. */
export type HarnessOptions = {
  provider?: FakePtyProviderOptions
  /** Record runtime, store, provider effects and claim calls into `log`. */
  record?: boolean
  /** Replace hooks of the runtime (fault injection); applied over the (recorded) runtime. */
  runtimeOverrides?: (runtime: InMemoryPtyRuntime) => Partial<PtySpawnRuntime>
  storeOverrides?: (store: InMemorySlotStore) => Partial<PtySlotStore>
  providerOverrides?: (provider: FakePtyProvider) => Partial<PtyProvider>
}

/** Build a harness; the provider's exits are reported to the runtime the way a controller does. */
export function createHarness(options: HarnessOptions = {}): Harness {
  const provider = createFakePtyProvider({ scheduling: 'manual', ...options.provider })
  const runtime = createInMemoryPtyRuntime()
  const store = createInMemorySlotStore()
  const claims = createClaimedOwnerRegistry()
  provider.onExit((event) => runtime.notePtyExit(event.id, event.incarnationId))
  const log: LogEntry[] = []
  const record = options.record === true
  const baseRuntime = record ? recordingRuntime(runtime, log) : runtime
  const usedRuntime: PtySpawnRuntime = { ...baseRuntime, ...options.runtimeOverrides?.(baseRuntime) }
  const baseStore = record ? recording(store, 'store', log) : store
  const usedStore: PtySlotStore = { ...baseStore, ...options.storeOverrides?.(baseStore) }
  const baseProvider: PtyProvider = record ? recording(provider, 'provider', log, PROVIDER_EFFECTS) : provider
  const usedProvider: PtyProvider = options.providerOverrides === undefined ? baseProvider : { ...spreadProvider(baseProvider), ...options.providerOverrides(provider) }
  const usedClaims = record ? recording(claims, 'claims', log, ['ensure', 'release']) : claims
  const deps: PtySpawnDeps = {
    resolveProvider: (hostId) => (hostId === 'local' ? usedProvider : undefined),
    runtime: usedRuntime,
    store: usedStore,
    claims: usedClaims,
  }
  return {
    provider,
    runtime,
    store,
    claims,
    deps,
    log,
    spawn: (spawnOptions) => executeRuntimePtySpawn(createRuntimePtySpawnState(deps, spawnOptions)),
    state: (spawnOptions) => createRuntimePtySpawnState(deps, spawnOptions),
  }
}

/** Copy a provider object's members (including getters) into a plain object that can be spread over. */
function spreadProvider(provider: PtyProvider): PtyProvider {
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(provider)) {
    const value = (provider as unknown as Record<string, unknown>)[key]
    copy[key] = typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(provider) : value
  }
  return copy as unknown as PtyProvider
}

/** Await a promise's rejection and return the error (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('Expected the promise to reject, but it resolved')
}
