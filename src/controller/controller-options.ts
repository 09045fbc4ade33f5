import { LOCAL_EXECUTION_HOST_ID, type ExecutionHostId, type PtyProvider } from '../contracts/index.js'
import {
  createClaimedOwnerRegistry,
  createInMemoryPtyRuntime,
  createInMemorySlotStore,
  type ClaimedOwnerRegistry,
  type PtySlotStore,
  type PtySpawnRuntime,
} from '../spawn/index.js'
import { describeValue } from './argument-validation.js'
import { assertKnownOptions, optionNamesOf, isOptionsObject } from '../contracts/known-options.js'
import { createSystemClock, withClampedDelays, type PtyClock } from './clock.js'
import {
  FLOW_CONTROL_HIGH_WATERMARK_CHARS,
  FLOW_CONTROL_LOW_WATERMARK_CHARS,
  PRODUCER_PAUSE_MAX_HOLD_MS,
  PRODUCER_PAUSE_REASSERT_INTERVAL_MS,
  type ProducerFlowControlConfig,
  type ProducerFlowControlMode,
} from './flow-control.js'
import { STOP_DEFAULT_DEADLINE_MS, STOP_FORCE_AFTER_MS, STOP_UNCONFIRMED_AFTER_MS } from './stop-constants.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/** Providers keyed by the host id they serve; `'local'` is the host a spawn uses by default. */
export type PtyProviderRegistry =
  | Readonly<Record<string, PtyProvider>>
  | ReadonlyMap<ExecutionHostId, PtyProvider>

/**
 * The runtime the controller drives: the spawn pipeline's hooks, plus an optional output-sequence
 * counter. `createInMemoryPtyRuntime()` implements all of it.
 */
export type PtyControllerRuntime = PtySpawnRuntime & {
  /**
   * Admit `chars` raw output chars for the PTY and return its new output sequence (a finite number
   * ≥ 0). Without it the controller counts per PTY itself, starting from the spawn's reconciled
   * sequence; it does so too for a chunk whose call throws or answers no sequence, reported as
   * `bookkeeping_failed` once per PTY (the first failure; a later sequence answer is used again).
   */
  notePtyOutput?(ptyId: string, chars: number): number
  /**
   * The PTY's death is proven and the controller published it: drop any per-PTY state kept for it
   * (output sequence, execution context). Called only for a proven exit, never for an unverified
   * one (its process may still be re-attached). Without it the runtime keeps that state.
   */
  forgetPty?(ptyId: string): void
}

/** Producer flow-control settings; every field defaults to the constant named in its doc. */
export type PtyFlowControlOptions = {
  /**
   * When flow control engages for a PTY. Default `'acknowledged'`: only once its consumer has
   * called `acknowledgeData` (a consumer that never acknowledges is never slowed down).
   * `'always'`: from the first output (strict). See {@link ProducerFlowControlMode}.
   */
  mode?: ProducerFlowControlMode | undefined
  /** Turn flow control off (`false`) without dropping the other settings. Default `true`. */
  enabled?: boolean | undefined
  /** Default `FLOW_CONTROL_HIGH_WATERMARK_CHARS` (100 000). */
  highWatermarkChars?: number | undefined
  /** Default `FLOW_CONTROL_LOW_WATERMARK_CHARS` (5 000); must be below the high watermark. */
  lowWatermarkChars?: number | undefined
  /** Default `PRODUCER_PAUSE_REASSERT_INTERVAL_MS` (5 000). */
  pauseReassertIntervalMs?: number | undefined
  /** Default `PRODUCER_PAUSE_MAX_HOLD_MS` (10 000). */
  pauseMaxHoldMs?: number | undefined
}

/** Stop escalation timings; every field defaults to the constant named in its doc. */
export type PtyStopTimingOptions = {
  /** Hang-up to forced stop in `stopAndWait`. Default `STOP_FORCE_AFTER_MS` (5 000). */
  forceAfterMs?: number | undefined
  /** Dispatch to `stop_unverified` when no exit is reported. Default `STOP_UNCONFIRMED_AFTER_MS` (10 000). */
  unconfirmedAfterMs?: number | undefined
  /** `stopAndWait`'s deadline when none is given, and `dispose`'s per PTY. Default `STOP_DEFAULT_DEADLINE_MS` (10 000). */
  defaultDeadlineMs?: number | undefined
}

/**
 * Options of {@link createPtyController}. Give exactly one of `provider` (served as host
 * `'local'`) or `providers`; everything else has an in-memory or system default, so
 * `createPtyController({ provider })` is a complete setup.
 */
export type PtyControllerOptions = {
  /** The one provider, registered as host `'local'`. */
  provider?: PtyProvider | undefined
  /**
   * Providers by host id: one provider per host (the same provider under two host ids is a
   * `TypeError`: each of its PTYs would be listed on both hosts).
   */
  providers?: PtyProviderRegistry | undefined
  /** Slot owners. Default: `createInMemorySlotStore()`. */
  store?: PtySlotStore | undefined
  /** Runtime hooks. Default: `createInMemoryPtyRuntime()`. */
  runtime?: PtyControllerRuntime | undefined
  /** Claimed owners. Default: `createClaimedOwnerRegistry()`. */
  claims?: ClaimedOwnerRegistry | undefined
  /**
   * Time source. Default: the system clock — `performance.now()` (monotonic, not an epoch time)
   * and the global timers, looked up on every call (fake-timer friendly).
   */
  clock?: PtyClock | undefined
  /** Producer flow control; `false` turns it off. */
  flowControl?: PtyFlowControlOptions | false | undefined
  /** Stop escalation timings. */
  stop?: PtyStopTimingOptions | undefined
  /**
   * Coalesce each PTY's output: the first chunk after a quiet spell is published at once, and the
   * chunks that follow within `dataBatchMs` milliseconds are merged into one `data` (or `bytes`)
   * event at the end of the window — VS Code's data bufferer, without its delay on the first
   * chunk. Pending output is always published before the PTY's `exit` (and on `dispose`). `0` or
   * absent: off (every provider chunk is its own event).
   */
  dataBatchMs?: number | undefined
}

/** The options after defaults and validation. */
export type ResolvedPtyControllerOptions = {
  /** Providers by host id (never empty). */
  providers: ReadonlyMap<ExecutionHostId, PtyProvider>
  /** The slot store. */
  store: PtySlotStore
  /** The runtime. */
  runtime: PtyControllerRuntime
  /** The claim registry. */
  claims: ClaimedOwnerRegistry
  /** The clock. */
  clock: PtyClock
  /** Flow control, or `null` when off. */
  flowControl: ProducerFlowControlConfig | null
  /** Stop timings. */
  stop: { [K in keyof PtyStopTimingOptions]-?: Exclude<PtyStopTimingOptions[K], undefined> }
  /** The output coalescing window in ms; `0` when off. */
  dataBatchMs: number
}

/** Every option `createPtyController` reads, and those of its `flowControl` and `stop` objects (complete: checked at compile time). */
const CONTROLLER_OPTION_NAMES = optionNamesOf<PtyControllerOptions>()('provider', 'providers', 'store', 'runtime', 'claims', 'clock', 'flowControl', 'stop', 'dataBatchMs')
const FLOW_CONTROL_OPTION_NAMES = optionNamesOf<PtyFlowControlOptions>()(
  'mode', 'enabled', 'highWatermarkChars', 'lowWatermarkChars', 'pauseReassertIntervalMs', 'pauseMaxHoldMs',
)
const STOP_OPTION_NAMES = optionNamesOf<PtyStopTimingOptions>()('forceAfterMs', 'unconfirmedAfterMs', 'defaultDeadlineMs')

function isProvider(value: unknown): value is PtyProvider {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as Record<string, unknown>
  return ['spawn', 'write', 'resize', 'shutdown', 'listProcesses', 'onData', 'onExit'].every(
    (method) => typeof candidate[method] === 'function',
  )
}

function resolveProviders(options: PtyControllerOptions): Map<ExecutionHostId, PtyProvider> {
  const hasOne = options.provider !== undefined
  const hasMany = options.providers !== undefined
  if (hasOne === hasMany) {
    throw argumentRefusal(`Expected exactly one of the \`provider\` and \`providers\` options, got ${hasOne ? 'both' : 'neither'}`, hasOne ? 'provider' : 'providers', hasOne ? options.provider : undefined)
  }
  if (hasOne) {
    if (!isProvider(options.provider)) {
      throw argumentRefusal(`Expected the \`provider\` option to be a PtyProvider, got ${describeValue(options.provider)}`, 'provider', options.provider)
    }
    return new Map([[LOCAL_EXECUTION_HOST_ID, options.provider]])
  }
  const registry = options.providers
  let entries: [string, unknown][]
  if (registry instanceof Map) entries = [...(registry as ReadonlyMap<string, unknown>).entries()]
  // Not an array: its indexes would register hosts "0", "1"… and every spawn would find "local" unreachable.
  else if (typeof registry === 'object' && registry !== null && !Array.isArray(registry)) entries = Object.entries(registry)
  else throw argumentRefusal(`Expected the \`providers\` option to be a record or a Map, got ${describeValue(registry)}`, 'providers', registry)
  if (entries.length === 0) {
    throw argumentRefusal('Expected the `providers` option to register at least one host, got an empty registry', 'providers', registry)
  }
  const providers = new Map<ExecutionHostId, PtyProvider>()
  for (const [hostId, provider] of entries) {
    if (typeof hostId !== 'string' || hostId.length === 0) {
      throw argumentRefusal(`Expected every \`providers\` key to be a non-empty host id, got ${describeValue(hostId)}`, 'providers', hostId)
    }
    if (!isProvider(provider)) {
      throw argumentRefusal(`Expected \`providers[${JSON.stringify(hostId)}]\` to be a PtyProvider, got ${describeValue(provider)}`, `providers[${JSON.stringify(hostId)}]`, provider)
    }
    // One provider under two host ids would list each of its PTYs as running on both hosts.
    const registeredAs = [...providers].find(([, registered]) => registered === provider)?.[0]
    if (registeredAs !== undefined) {
      throw argumentRefusal(`Expected \`providers[${JSON.stringify(hostId)}]\` to be a provider of its own, got the provider already registered as ${JSON.stringify(registeredAs)}`, `providers[${JSON.stringify(hostId)}]`, provider)
    }
    providers.set(hostId, provider)
  }
  return providers
}

function positiveNumber(name: string, value: unknown, fallback: number, { integer }: { integer: boolean }): number {
  if (value === undefined) return fallback
  const ok = typeof value === 'number' && Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value))
  if (!ok) {
    throw argumentRefusal(`Expected the \`${name}\` option to be a positive ${integer ? 'integer' : 'number'}, got ${describeValue(value)}`, name, value)
  }
  return value
}

function nonNegativeNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw argumentRefusal(`Expected the \`${name}\` option to be a non-negative number, got ${describeValue(value)}`, name, value)
  }
  return value
}

function resolveFlowControl(option: PtyControllerOptions['flowControl']): ProducerFlowControlConfig | null {
  if (option === false) return null
  if (option === undefined) {
    return {
      mode: 'acknowledged',
      highWatermarkChars: FLOW_CONTROL_HIGH_WATERMARK_CHARS,
      lowWatermarkChars: FLOW_CONTROL_LOW_WATERMARK_CHARS,
      pauseReassertIntervalMs: PRODUCER_PAUSE_REASSERT_INTERVAL_MS,
      pauseMaxHoldMs: PRODUCER_PAUSE_MAX_HOLD_MS,
    }
  }
  if (typeof option !== 'object' || option === null) {
    throw argumentRefusal(`Expected the \`flowControl\` option to be an object or false, got ${describeValue(option)}`, 'flowControl', option)
  }
  assertKnownOptions('flowControl.', option, FLOW_CONTROL_OPTION_NAMES)
  if (option.enabled !== undefined && typeof option.enabled !== 'boolean') {
    throw argumentRefusal(`Expected the \`flowControl.enabled\` option to be a boolean, got ${describeValue(option.enabled)}`, 'flowControl.enabled', option.enabled)
  }
  const mode = option.mode ?? 'acknowledged'
  if (mode !== 'acknowledged' && mode !== 'always') {
    throw argumentRefusal(`Expected the \`flowControl.mode\` option to be 'acknowledged' or 'always', got ${describeValue(option.mode)}`, 'flowControl.mode', option.mode)
  }
  const setting = (name: Exclude<keyof PtyFlowControlOptions, 'mode' | 'enabled'>, fallback: number, integer: boolean): number =>
    positiveNumber(`flowControl.${name}`, option[name], fallback, { integer })
  const high = setting('highWatermarkChars', FLOW_CONTROL_HIGH_WATERMARK_CHARS, true)
  const low = setting('lowWatermarkChars', FLOW_CONTROL_LOW_WATERMARK_CHARS, true)
  if (low >= high) {
    throw argumentRefusal(`Expected the \`flowControl.lowWatermarkChars\` option to be below \`highWatermarkChars\` (${high}), ` +
        `got ${describeValue(low)}`, 'flowControl.lowWatermarkChars', low)
  }
  const config: ProducerFlowControlConfig = {
    mode,
    highWatermarkChars: high,
    lowWatermarkChars: low,
    pauseReassertIntervalMs: setting('pauseReassertIntervalMs', PRODUCER_PAUSE_REASSERT_INTERVAL_MS, false),
    pauseMaxHoldMs: setting('pauseMaxHoldMs', PRODUCER_PAUSE_MAX_HOLD_MS, false),
  }
  return option.enabled === false ? null : config
}

function resolveClock(clock: unknown): PtyClock {
  if (clock === undefined) return withClampedDelays(createSystemClock())
  const candidate = clock as Record<string, unknown> | null
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate['now'] !== 'function' ||
    typeof candidate['setTimeout'] !== 'function' ||
    typeof candidate['clearTimeout'] !== 'function'
  ) {
    throw argumentRefusal(`Expected the \`clock\` option to have now, setTimeout and clearTimeout, got ${describeValue(clock)}`, 'clock', clock)
  }
  return withClampedDelays(clock as PtyClock)
}

/**
 * `value` when it is absent or an object with each of `methods`; else a `TypeError` naming the
 * option (a store of `5` used to fail only at the first slot spawn, as "store.getLiveOwner is not a
 * function", without naming the option).
 */
function withMethods<T>(option: string, value: T | undefined, methods: readonly string[]): T | undefined {
  if (value === undefined) return undefined
  const candidate = value as Record<string, unknown> | null
  if (typeof candidate !== 'object' || candidate === null || methods.some((method) => typeof candidate[method] !== 'function')) {
    const expected = methods.length === 0 ? 'an object' : `an object with ${methods.join(', ')}`
    throw argumentRefusal(`Expected the \`${option}\` option to be ${expected}, got ${describeValue(value)}`, option, value)
  }
  return value
}

/**
 * Apply defaults and validate. Throws a `TypeError` naming the option for every malformed value
 * (a programmer error).
 */
export function resolvePtyControllerOptions(options: PtyControllerOptions): ResolvedPtyControllerOptions {
  if (!isOptionsObject(options)) {
    throw argumentRefusal(`Expected the controller options to be an object, got ${describeValue(options)}`, 'options', options)
  }
  // A misspelt option (`flowcontrol`, `stop.forceAfter`) would be ignored, its default used: refused.
  assertKnownOptions('', options, CONTROLLER_OPTION_NAMES)
  const stop = options.stop ?? {}
  if (!isOptionsObject(stop)) {
    throw argumentRefusal(`Expected the \`stop\` option to be an object, got ${describeValue(stop)}`, 'stop', stop)
  }
  assertKnownOptions('stop.', stop, STOP_OPTION_NAMES)
  return {
    providers: resolveProviders(options),
    store: withMethods('store', options.store, ['getLiveOwner', 'getPersistedOwner', 'bindOwner', 'retireOwner']) ?? createInMemorySlotStore(),
    runtime: withMethods('runtime', options.runtime, []) ?? createInMemoryPtyRuntime(),
    claims: withMethods('claims', options.claims, ['ensure', 'find', 'release', 'owners']) ?? createClaimedOwnerRegistry(),
    clock: resolveClock(options.clock),
    flowControl: resolveFlowControl(options.flowControl),
    stop: {
      forceAfterMs: nonNegativeNumber('stop.forceAfterMs', stop.forceAfterMs, STOP_FORCE_AFTER_MS),
      unconfirmedAfterMs: nonNegativeNumber('stop.unconfirmedAfterMs', stop.unconfirmedAfterMs, STOP_UNCONFIRMED_AFTER_MS),
      defaultDeadlineMs: nonNegativeNumber('stop.defaultDeadlineMs', stop.defaultDeadlineMs, STOP_DEFAULT_DEADLINE_MS),
    },
    dataBatchMs: nonNegativeNumber('dataBatchMs', options.dataBatchMs, 0),
  }
}
