import { describeValue } from '../contracts/describe-value.js'
import { assertKnownOptions, isOptionsObject, optionNamesOf } from '../contracts/known-options.js'
import type {
  ProviderSpawnOptions,
  PtyDataEvent,
  PtyExitEvent,
  PtyProvider,
  PtySpawnResult,
} from '../contracts/index.js'

// The vocabulary of the provider conformance suite: how a host tells it to drive a provider, what
// a check records and works with, and what a check is.

/**
 * How long one conformance check waits for an event before it fails. Real PTYs start a shell and
 * exit within a few hundred milliseconds; a loaded CI box can be ten times slower.
 */
export const CONFORMANCE_DEFAULT_TIMEOUT_MS = 5_000

/** What a provider can and cannot do; a check that needs a missing capability is not registered. */
export type PtyProviderConformanceCapabilities = {
  /** The provider delivers signals (graceful vs immediate stops differ). Default `true`; `false` on Windows. */
  signals?: boolean | undefined
  /** `getSize` reads the size back from the host. Default: `true` when the provider has `getSize`. */
  resizeReadback?: boolean | undefined
  /**
   * A PTY missing from `listProcesses` is proven absent (so an exited PTY must be missing). Default:
   * the provider's own `authoritativeListings`.
   */
  authoritativeListings?: boolean | undefined
  /** `dispose()` reports an exit for each PTY it kills. Default `true`. */
  exitsOnDispose?: boolean | undefined
  /**
   * The provider writes raw bytes (`writeBytes`): its checks run. Default: whether the provider
   * has `writeBytes`. `true` fails the checks of a provider without it; `false` skips them.
   */
  writeBytes?: boolean | undefined
  /**
   * The provider's stop may close its transport to a PTY before the PTY's end is proven — the SSH
   * provider closes the channel at a stop's last step when the program's exit was not reported in
   * time. The bytes it held for the PTY are then dropped with the transport, and their writes may
   * settle `refused('provider_refused_write')` (none of their bytes left) or
   * `unverifiable('transport_lost', true)` (some did), as its docs say, besides what a write
   * dropped at the PTY's exit settles. Default `false`: only the latter.
   */
  stopClosesTransportFirst?: boolean | undefined
  /**
   * Once its `dispose()` resolved, the provider refuses every call but `dispose` and the `on*`
   * subscriptions with an error whose `code` is `provider_disposed` and whose message names the
   * method (a method answering with a promise rejects, any other throws) — the rule of
   * `PtyProvider.dispose`, which every bundled provider follows. Default `true`; `false` skips the
   * check (a provider written before the rule, which answers after its dispose).
   */
  refusesCallsAfterDispose?: boolean | undefined
  /**
   * The provider has a `detach()` that lets go of its PTYs and leaves them running, answering
   * afterwards as the pty host provider does (docs/pty-host.md, "After `detach()`"): a spawn, a
   * listing and a stop refused with `code: 'provider_detached'` naming the method (and, in `ptyId`,
   * the PTY), but a stop of a PTY whose exit it reported, which resolves; `null` about a PTY that
   * runs on (`hasPty`, `probeLiveness`, the inspections), `false` about one it saw end; a write
   * refused `provider_refused_write` (`pty_exited` once it reported the exit), a resize `false`.
   * Default `false` (opt in): the long-running PTY the check spawns runs on after it — with a real
   * host, stop it in your teardown (the pty host: `stopPtyHost`).
   */
  detach?: boolean | undefined
  /**
   * The provider refuses a spawn option that likely misspells one (`cdw`, `sessionID`, `col`,
   * `argv`, `id`, `cmd`, `evn`) — the keys `findMisspeltSpawnOption` from `ptykit/contracts` finds —
   * with an error whose `code` is `invalid_spawn_option`, whose `option` is the key as given and
   * whose `value` is its value, whose message names the key and the option meant, and, for a
   * misspelt `env`, neither shows nor keeps the value; it starts nothing (`assertNoMisspeltSpawnOption`
   * throws that refusal). Every bundled provider does. Default `false` (opt in): a provider written
   * before the rule ignores such a key, as spawn options may carry a host's own.
   */
  refusesMisspeltSpawnOptions?: boolean | undefined
}

/**
 * How the conformance suite drives a provider generically: which spawn options start which kind
 * of process, what the provider cannot do, and how long to wait.
 */
export type PtyProviderConformanceOptions = {
  /** Options that start a process which prints `text` and then exits with code 0. */
  spawnEcho(text: string): ProviderSpawnOptions
  /** Options that start a process which keeps running until it is stopped (and reads its input). */
  spawnLongRunning(): ProviderSpawnOptions
  /** Options that start a process which exits on its own with `code` (printing nothing is fine). */
  spawnExit(code: number): ProviderSpawnOptions
  /**
   * Options that start a process which kills itself with signal number `signal` (as
   * `sh -c 'kill -TERM $$'` does), for the checks that a signalled death is never reported as an
   * exit code. Asked for 2 (INT), 9 (KILL) and 15 (TERM). Leave it out where processes have no
   * signals (Windows); those checks are then not registered.
   */
  spawnSignaled?: ((signal: number) => ProviderSpawnOptions) | undefined
  /**
   * SIGKILL the process of a PTY `provider` spawned, from outside the provider — as `kill -9` or the
   * OOM killer would (`process.kill(result.pid, 'SIGKILL')` for a local or loopback process; a
   * fake's scripted exit with signal 9). Resolve once the signal was sent. For the check that
   * such a death, with a stop requested right after it, keeps its cause and says
   * `diedBeforeStopRequest`; not registered without it.
   */
  killFromOutside?: ((result: PtySpawnResult, provider: PtyProvider) => void | Promise<void>) | undefined
  /**
   * Make the program of a PTY `provider` spawned with `spawnLongRunning` stop reading its input,
   * as a busy or stopped program does, so that the provider must hold what is written to it —
   * `process.kill(result.pid, 'SIGSTOP')` for a local or loopback process; a fake's
   * `setInputHeld(result.id, true)`. Resolve once it reads no more. For the check that a write
   * whose bytes the provider held settles when the PTY ends first (stopped, or SIGKILLed from
   * outside with `killFromOutside`) — never `accepted`, never left pending; not registered without it.
   */
  stopReadingInput?: ((result: PtySpawnResult, provider: PtyProvider) => void | Promise<void>) | undefined
  /** What the provider cannot do. */
  capabilities?: PtyProviderConformanceCapabilities | undefined
  /** How long to wait for an event. Default {@link CONFORMANCE_DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number | undefined
  /** Called after each successful spawn (for example to flush a fake's scheduled output). */
  afterSpawn?: ((provider: PtyProvider, result: PtySpawnResult) => void | Promise<void>) | undefined
  /** Called repeatedly while a check waits for an event (for example `provider.settle()` of a manual fake). */
  drive?: ((provider: PtyProvider) => void | Promise<void>) | undefined
}

/** One event a conformance check recorded: a provider's data or exit event, tagged. */
export type PtyProviderConformanceEvent =
  | {
      /** A data event. */
      kind: 'data'
      /** The event as the provider emitted it. */
      event: PtyDataEvent
    }
  | {
      /** An exit event. */
      kind: 'exit'
      /** The event as the provider emitted it. */
      event: PtyExitEvent
    }

/** What a conformance check works with: a fresh provider, its recorded events, and helpers that wait with a timeout. */
export type PtyProviderConformanceHarness = {
  /** The provider under test (fresh for this check). */
  readonly provider: PtyProvider
  /** Spawn through the provider, remember the id for cleanup, and run `afterSpawn`. */
  spawn(options: ProviderSpawnOptions): Promise<PtySpawnResult>
  /** Every data and exit event of a PTY, in arrival order. */
  eventsOf(id: string): readonly PtyProviderConformanceEvent[]
  /** Every exit event of a PTY. */
  exitsOf(id: string): PtyExitEvent[]
  /** The concatenated output of a PTY. */
  outputOf(id: string): string
  /** Wait (driving the provider, with the timeout) for the first exit of a PTY. */
  waitForExit(id: string): Promise<PtyExitEvent>
}

/** One check of the conformance suite, runnable with {@link runPtyProviderConformanceCheck}. */
export type PtyProviderConformanceCheck = {
  /** What the check proves, as a sentence. */
  readonly name: string
  /** Run the check; throws (an assertion error) when the provider breaks the rule. */
  run(harness: PtyProviderConformanceHarness): Promise<void>
}

/** Every capability of {@link PtyProviderConformanceCapabilities} (complete: checked at compile time). */
const CONFORMANCE_CAPABILITY_NAMES = optionNamesOf<PtyProviderConformanceCapabilities>()(
  'signals',
  'resizeReadback',
  'authoritativeListings',
  'exitsOnDispose',
  'writeBytes',
  'stopClosesTransportFirst',
  'refusesCallsAfterDispose',
  'detach',
  'refusesMisspeltSpawnOptions',
)

/** Every option of {@link PtyProviderConformanceOptions} (complete: checked at compile time). */
const CONFORMANCE_OPTION_NAMES = optionNamesOf<PtyProviderConformanceOptions>()('spawnEcho', 'spawnLongRunning', 'spawnExit', 'spawnSignaled', 'killFromOutside', 'stopReadingInput', 'capabilities', 'timeoutMs', 'afterSpawn', 'drive')

/**
 * Throw a `TypeError` naming the option unless `options` is an object with the three spawn
 * functions and no unknown option: `ptyProviderConformanceChecks()` from plain JavaScript threw
 * "Cannot read properties of undefined (reading 'capabilities')", and a misspelt `capabilites`
 * ran checks the provider had said it cannot pass (as would a misspelt capability inside it).
 */
export function assertConformanceOptions(options: unknown): asserts options is PtyProviderConformanceOptions {
  if (!isOptionsObject(options)) throw new TypeError(`Expected the conformance options to be an object ({ spawnEcho, spawnLongRunning, spawnExit, … }), got ${describeValue(options)}`)
  assertKnownOptions('', options, CONFORMANCE_OPTION_NAMES)
  const capabilities = (options as { capabilities?: unknown }).capabilities
  if (capabilities !== undefined && !isOptionsObject(capabilities)) {
    throw new TypeError(`Expected the \`capabilities\` option to be an object, got ${describeValue(capabilities)}`)
  }
  // A misspelt capability (`signal: false`) would be ignored: the checks it was to skip would run.
  assertKnownOptions('capabilities.', capabilities as object | undefined, CONFORMANCE_CAPABILITY_NAMES)
  for (const name of ['spawnEcho', 'spawnLongRunning', 'spawnExit'] as const) {
    const value = (options as Record<string, unknown>)[name]
    if (typeof value !== 'function') throw new TypeError(`Expected the \`${name}\` option to be a function, got ${describeValue(value)}`)
  }
  for (const name of ['spawnSignaled', 'killFromOutside', 'stopReadingInput'] as const) {
    const value = (options as Record<string, unknown>)[name]
    if (value !== undefined && typeof value !== 'function') throw new TypeError(`Expected the \`${name}\` option to be a function (or left out), got ${describeValue(value)}`)
  }
}
