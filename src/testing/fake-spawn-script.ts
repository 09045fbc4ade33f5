import { MAX_PTY_DIMENSION, isWriteSettlement, type ProviderSequence, type PtyIncarnationId, type WriteSettlement } from '../contracts/index.js'
import { describeValue } from '../contracts/describe-value.js'
import { isPtyDimension } from '../contracts/pty-dimension.js'

/**
 * An exit the fake provider reports for a PTY.
 *
 * With a cause (the default), the event's `cause` is built at the source with
 * `resolveProcessExitCause`, exactly as a real provider that can tell a signal from a code does.
 * Set `withoutCause` to play an older sender that forwards a bare code: the controller must then
 * resolve it with `resolveUnreportedExitCause`.
 */
export type FakeExit = {
  /** The status the fake host forwards (the event's `code`). Negative means "could not vouch". */
  exitCode: number
  /** The terminating signal, if any; only a positive integer counts as one. */
  signal?: number | null | undefined
  /**
   * `false` plays a wrapper (such as macOS `login(1)`) that owns the reported status; the cause is
   * then `unknown/host_status_unavailable`. Overrides the spawn's and the provider's setting.
   */
  hostReportsChildExitStatus?: boolean | undefined
  /** Play an old sender: the exit event carries no `cause` at all. */
  withoutCause?: boolean | undefined
  /**
   * Send the event's `observed` evidence: `'synthetic'` plays a host that reports an exit it did
   * not observe (lost contact); `'provider'` says so explicitly. Absent: the field is left out.
   */
  observed?: 'provider' | 'synthetic' | undefined
  /**
   * Send `stopRequestedBeforeDeath: true`: play a provider that attests a stop of this
   * incarnation was requested through it before the death — by another app sharing its host, or
   * an earlier run of this one (the pty host does). Absent: the field is left out, as the fake's
   * own stops leave it (the controller that asked knows it asked).
   */
  stopRequestedBeforeDeath?: boolean | undefined
  /**
   * Send `diedBeforeStopRequest: true`: play a provider whose stop of this PTY was pending when
   * something else ended it — an outside `kill -9` or the OOM killer (`signal: 9`) that crossed a
   * stop's hang-up, which the bundled providers report so (the death was not the stop's) — so
   * that a controller keeps the exit's cause instead of settling it as `operator_close`. Absent:
   * the field is left out, and an exit emitted while a stop is pending reads as that stop's.
   */
  diedBeforeStopRequest?: boolean | undefined
  /**
   * Report this incarnation instead of the live one, to simulate a stale exit: a late exit of an
   * older process behind a reused id. A stale exit does not end the current process.
   */
  incarnationId?: PtyIncarnationId | undefined
}

/**
 * What the fake provider does when asked to stop a PTY.
 *
 * - `confirm` (default): emits the exit — signal 1 (SIGHUP) for a graceful stop, 9 (SIGKILL) for an
 *   immediate one, code 0 as node-pty reports it — then resolves;
 * - `never_confirm`: resolves, but the PTY stays live and no exit ever comes (a lost stop);
 * - `fail`: rejects with an `Error` and the PTY stays live (the stop could not be dispatched);
 * - `time_out`: rejects with an `Error` whose `code` is `'shutdown_timeout'` and the PTY stays live —
 *   the stop was sent but not seen done by its deadline, as node-pty, SSH and the pty host reject one
 *   under load; emit the exit (`emitExit`) to play the stop landing a moment later, or none to play
 *   one that never does;
 * - `exit_unreported`: the process ends (listings no longer have it; `hasPty` and `probeLiveness`
 *   answer `false` with authoritative listings), then resolves, but no exit event ever comes (the
 *   report was lost on its way, as over a dropped connection). Output it wrote before is still
 *   delivered (after a pause, once resumed).
 */
export type FakeShutdownBehaviour = 'confirm' | 'never_confirm' | 'fail' | 'time_out' | 'exit_unreported'

/** Every {@link FakeShutdownBehaviour}, for checking one given at run time. */
export const FAKE_SHUTDOWN_BEHAVIOURS: readonly FakeShutdownBehaviour[] = Object.freeze(['confirm', 'never_confirm', 'fail', 'time_out', 'exit_unreported'])

/** The behaviours quoted for an error message: `'confirm', 'never_confirm', …`. */
export function quotedFakeShutdownBehaviours(): string {
  return FAKE_SHUTDOWN_BEHAVIOURS.map((behaviour) => `'${behaviour}'`).join(', ')
}

/**
 * How one spawn of the fake provider behaves. Queue one per spawn with
 * `provider.scriptNextSpawn(script)`, pass one as `metadata.fakeScript` in the spawn options, or
 * set `defaultScript` for every spawn that has neither. An empty script spawns a live, silent PTY.
 */
export type FakeSpawnScript = {
  /** Reuse this PTY id. A new incarnation is minted on every spawn, so old and new stay apart. */
  id?: string | undefined
  /** The pid to report (a positive integer, as a spawn reply's must be). Default: a counter from 1000. */
  pid?: number | undefined
  /** The spawn rejects with this value (when not `undefined`); nothing is left running. */
  fail?: unknown
  /**
   * The process starts but the reply stays pending until `releaseSpawn(id)` (or `failSpawn`, which
   * rejects it and removes the process). Output and an exit can be emitted while it hangs; a PTY
   * that exited meanwhile is released with `exitedBeforeSpawnReply: true`.
   */
  hang?: boolean | undefined
  /**
   * The process exits before the spawn replies: the exit event is emitted first, and the result has
   * `exitedBeforeSpawnReply: true`. Scripted `output` is then emitted before that exit.
   */
  exitBeforeReply?: FakeExit | undefined
  /** Output chunks, emitted in order after the spawn reply. */
  output?: readonly string[] | undefined
  /** An exit, emitted after the spawn reply and after `output`. */
  exit?: FakeExit | undefined
  /**
   * What `hasPty` and `probeLiveness` answer for this incarnation, overriding the default (`true`
   * while live; after exit `false` with authoritative listings, otherwise `null`), while the id
   * holds it (a probe naming it after a later spawn took the id: see `FakePtyProvider.probeLiveness`).
   */
  liveness?: boolean | null | undefined
  /** The settlement every write to this PTY gets while it is live (default `accepted`). */
  writeSettlement?: WriteSettlement | undefined
  /** What a stop of this PTY does (default `confirm`). */
  shutdown?: FakeShutdownBehaviour | undefined
  /** The provider sequence to return in the spawn result (default `{ value: 0, generation: 'reset' }`, as real providers report a fresh start). */
  providerSequence?: ProviderSequence | undefined
  /** Returned in the spawn result, and used for this PTY's exit causes. */
  hostReportsChildExitStatus?: boolean | undefined
  /** Columns to report instead of the requested ones (a host that clamps the size). */
  cols?: number | undefined
  /** Rows to report instead of the requested ones. */
  rows?: number | undefined
  /**
   * Call `options.onPtySpawnCommitted` once, as soon as the process "exists" (default `true`).
   * `false` plays a provider that never reports the commit.
   */
  commitOnSpawn?: boolean | undefined
}

/**
 * The spawn-options metadata key the fake reads a {@link FakeSpawnScript} from, as an alternative
 * to `scriptNextSpawn`. It makes generic drivers (the conformance suite) able to script a spawn.
 */
export const FAKE_SCRIPT_METADATA_KEY = 'fakeScript'

/**
 * Build the spawn-options `metadata` that scripts a fake spawn: `{ fakeScript: script }`. Lets a
 * generic driver (the conformance suite, a host's own helper) script the fake without a handle on it.
 *
 * @example
 * ```ts
 * await provider.spawn({ metadata: fakeScriptMetadata({ output: ['hi\r\n'], exit: { exitCode: 0 } }) })
 * ```
 */
export function fakeScriptMetadata(script: FakeSpawnScript): Readonly<Record<string, unknown>> {
  return { [FAKE_SCRIPT_METADATA_KEY]: script }
}

/** Whether `value` can be read as a script: an object, not `null`, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The script carried in the spawn options' `metadata.fakeScript`: `undefined` when there is none,
 * a `TypeError` naming the option or the field when it is not a well-formed script.
 */
export function scriptFromMetadata(metadata: Readonly<Record<string, unknown>> | undefined): FakeSpawnScript | undefined {
  const fromMetadata = metadata?.[FAKE_SCRIPT_METADATA_KEY]
  if (fromMetadata === undefined) return undefined
  assertFakeSpawnScript(fromMetadata, `the \`metadata.${FAKE_SCRIPT_METADATA_KEY}\` option`)
  return fromMetadata
}

/**
 * Throw a `TypeError` naming the field unless `exit` is a {@link FakeExit}: a test's typo must not
 * become a malformed provider event, nor a verdict it did not ask for (a `withoutCause: 'true'`
 * read as `false` publishes `exited(0)`). The messages name the exit as `where` (whose field:
 * `emitExit`, the script's `exit`) and the whole object as `whole`.
 */
export function assertFakeExit(exit: unknown, where: string, whole: string = where): asserts exit is FakeExit {
  if (!isPlainObject(exit)) throw new TypeError(`Expected ${whole} to be a FakeExit object, got ${describeValue(exit)}`)
  const { exitCode, signal, hostReportsChildExitStatus, withoutCause, observed, stopRequestedBeforeDeath, diedBeforeStopRequest } = exit as Record<string, unknown>
  if (!Number.isInteger(exitCode)) throw new TypeError(`Expected the \`exitCode\` of ${where} to be an integer, got ${describeValue(exitCode)}`)
  if (signal !== undefined && signal !== null && !Number.isInteger(signal)) {
    throw new TypeError(`Expected the \`signal\` of ${where} to be an integer, null or undefined, got ${describeValue(signal)}`)
  }
  for (const [name, value] of [
    ['hostReportsChildExitStatus', hostReportsChildExitStatus],
    ['withoutCause', withoutCause],
    ['stopRequestedBeforeDeath', stopRequestedBeforeDeath],
    ['diedBeforeStopRequest', diedBeforeStopRequest],
  ] as const) {
    if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`Expected the \`${name}\` of ${where} to be a boolean or undefined, got ${describeValue(value)}`)
  }
  if (observed !== undefined && observed !== 'provider' && observed !== 'synthetic') {
    throw new TypeError(`Expected the \`observed\` of ${where} to be 'provider', 'synthetic' or undefined, got ${describeValue(observed)}`)
  }
}

/**
 * Throw a `TypeError` naming the field unless `script` is a {@link FakeSpawnScript} — wherever a
 * script comes from (`scriptNextSpawn`, a spawn's metadata, the `defaultScript` option), so that a
 * test's typo fails where it was made instead of playing a spawn the test did not ask for (a
 * `hang: 'false'` read as `true`, a `liveness: 'false'` answered as is). `what` names the script
 * as a whole in the message. `fail` and `providerSequence` are passed on as given: a test may
 * script a malformed value there on purpose, to see the controller refuse it.
 */
export function assertFakeSpawnScript(script: unknown, what: string): asserts script is FakeSpawnScript {
  if (!isPlainObject(script)) throw new TypeError(`Expected ${what} to be a FakeSpawnScript object, got ${describeValue(script)}`)
  const field = (name: string, expected: string): TypeError =>
    new TypeError(`Expected the script's \`${name}\` to be ${expected}, got ${describeValue(script[name])}`)
  const { id, pid, hang, liveness, shutdown, writeSettlement, hostReportsChildExitStatus, cols, rows, commitOnSpawn, output, exit, exitBeforeReply } = script
  // As a spawn reply must be (`PtySpawnResult`): refused here, when the test scripts it, rather
  // than as a spawn that fails `provider_spawn_failed` later.
  if (id !== undefined && (typeof id !== 'string' || id.length === 0)) throw field('id', 'a non-empty string or undefined')
  if (pid !== undefined && !(Number.isSafeInteger(pid) && (pid as number) > 0)) throw field('pid', 'a positive integer or undefined')
  for (const [name, value] of [['cols', cols], ['rows', rows]] as const) {
    if (value !== undefined && !isPtyDimension(value)) {
      throw field(name, `an integer from 1 to ${MAX_PTY_DIMENSION} or undefined`)
    }
  }
  for (const [name, value] of [['hang', hang], ['hostReportsChildExitStatus', hostReportsChildExitStatus], ['commitOnSpawn', commitOnSpawn]] as const) {
    if (value !== undefined && typeof value !== 'boolean') throw field(name, 'a boolean or undefined')
  }
  if (liveness !== undefined && liveness !== null && typeof liveness !== 'boolean') throw field('liveness', 'a boolean, null or undefined')
  if (shutdown !== undefined && !FAKE_SHUTDOWN_BEHAVIOURS.includes(shutdown as FakeShutdownBehaviour)) {
    throw field('shutdown', `one of ${quotedFakeShutdownBehaviours()}`)
  }
  if (writeSettlement !== undefined && !isWriteSettlement(writeSettlement)) throw field('writeSettlement', 'a WriteSettlement or undefined')
  if (output !== undefined && (!Array.isArray(output) || !output.every((chunk) => typeof chunk === 'string'))) {
    throw field('output', 'an array of strings')
  }
  if (exit !== undefined) assertFakeExit(exit, "the script's `exit`")
  if (exitBeforeReply !== undefined) assertFakeExit(exitBeforeReply, "the script's `exitBeforeReply`")
}
