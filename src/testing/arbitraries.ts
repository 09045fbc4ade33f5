import type { Arbitrary } from 'fast-check'
import { fc } from './testing-peers.js'
import { WRITE_REFUSAL_REASONS, WRITE_UNVERIFIABLE_REASONS } from '../contracts/write-settlement.js'
import {
  PTY_INCARNATION_ID_MAX_LENGTH,
  toPtyIncarnationId,
  type ProviderSequence,
  type PtyIncarnationId,
  type PtySpawnResult,
  type WriteSettlement,
} from '../contracts/index.js'
import type {
  ProcessExitObservation,
  TerminalExitCause,
  TerminalExitUnknownReason,
  WireExit,
} from '../exit-cause/index.js'
import type { FakeExit } from './fake-spawn-script.js'
import { assertOptionsBag, optionNamesOf } from '../contracts/known-options.js'

/** The options of `arbitraryWireExit`: any other name is refused, not ignored. */
const WIRE_EXIT_CONSTRAINT_NAMES = optionNamesOf<WireExitConstraints>()('malformedCodes', 'garbageCauses')

/** The largest signal number generated besides edge cases: covers every POSIX and real-time signal. */
export const ARBITRARY_MAX_SIGNAL = 64

/** The largest "ordinary" exit status generated: the POSIX range is 0–255. */
export const ARBITRARY_MAX_EXIT_STATUS = 255

const UNKNOWN_REASONS: readonly TerminalExitUnknownReason[] = [
  'stop_unverified',
  'host_status_unavailable',
  'cause_unreported',
]


// Exit codes the way hosts send them: mostly POSIX statuses, the stop sentinel, sometimes any integer.
const integerExitCode = (): Arbitrary<number> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: ARBITRARY_MAX_EXIT_STATUS }) },
    { weight: 2, arbitrary: fc.constantFrom(0, -1, 1, 130, 137, 143) },
    { weight: 1, arbitrary: fc.integer() },
  )

const positiveSignal = (): Arbitrary<number> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: ARBITRARY_MAX_SIGNAL }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 ** 31 - 1 }) },
  )

// Every shape a signal field takes in the wild: none, null, zero, negative, a real signal.
const signalField = (): Arbitrary<number | null> =>
  fc.oneof(fc.constant(null), fc.constant(0), fc.integer({ min: -5, max: -1 }), positiveSignal())

/** The largest pid Linux can hand out (`/proc/sys/kernel/pid_max` on 64-bit); generated pids stay realistic. */
const LINUX_PID_MAX = 4_194_304

/**
 * Observations a host can make when a process ends — the input of `resolveProcessExitCause`.
 *
 * Covers negative stop sentinels, `0` next to a signal (as node-pty reports every signalled
 * death), `null`/`0`/negative "no signal" values, and `hostReportsChildExitStatus` absent, `true`
 * or `false`. Codes are integers; use your own arbitrary to add malformed numbers.
 */
export function arbitraryProcessExitObservation(): Arbitrary<ProcessExitObservation> {
  return fc.record(
    { exitCode: integerExitCode(), signal: signalField(), hostReportsChildExitStatus: fc.boolean() },
    { requiredKeys: ['exitCode'] },
  )
}

/** Every valid `TerminalExitCause`: all four kinds and all three unknown reasons. Accepted by `isTerminalExitCause`. */
export function arbitraryTerminalExitCause(): Arbitrary<TerminalExitCause> {
  return fc.oneof(
    fc.constant<TerminalExitCause>({ kind: 'operator_close' }),
    positiveSignal().map((signal): TerminalExitCause => ({ kind: 'signaled', signal })),
    fc
      .oneof(fc.integer({ min: 0, max: ARBITRARY_MAX_EXIT_STATUS }), fc.nat())
      .map((exitCode): TerminalExitCause => ({ kind: 'exited', exitCode })),
    fc.constantFrom(...UNKNOWN_REASONS).map((reason): TerminalExitCause => ({ kind: 'unknown', reason })),
  )
}

// Values that look like causes but are not: what a buggy or hostile sender puts on the wire.
const garbageCause = (): Arbitrary<unknown> =>
  fc.oneof(
    fc.anything(),
    fc.constantFrom<unknown>(
      null,
      'exited',
      { kind: 'signaled', signal: 0 },
      { kind: 'signaled', signal: -9 },
      { kind: 'signaled', signal: 1.5 },
      { kind: 'signaled', signal: '9' },
      { kind: 'exited', exitCode: -1 },
      { kind: 'exited', exitCode: Number.NaN },
      { kind: 'exited' },
      { kind: 'unknown', reason: 'timeout' },
      { kind: 'operator_close', reason: 'stop_unverified' },
      { kind: 'crashed' },
    ),
    arbitraryTerminalExitCause().map((cause) => ({ ...cause, extra: true })),
  )

/** Constraints of {@link arbitraryWireExit}. */
export type WireExitConstraints = {
  /** Also generate malformed codes (NaN, ±Infinity, fractions). Default `false`. */
  malformedCodes?: boolean | undefined
  /** Generate garbage causes besides valid ones. Default `true`. */
  garbageCauses?: boolean | undefined
}

/**
 * Exits as they arrive over a process or network boundary: a code plus maybe a valid cause, maybe
 * a garbage one (a wrong kind, an extra key, a non-positive signal…), maybe none (an old sender).
 * Feed them to `exitCauseFromWire` or to your own wire decoder.
 *
 * @throws TypeError when `constraints` is not an object or holds an option other than
 * `malformedCodes` and `garbageCauses` (naming it).
 */
export function arbitraryWireExit(constraints: WireExitConstraints = {}): Arbitrary<WireExit> {
  assertOptionsBag('wire exit constraints', constraints, WIRE_EXIT_CONSTRAINT_NAMES)
  const code =
    constraints.malformedCodes === true
      ? fc.oneof(
          { weight: 4, arbitrary: integerExitCode() },
          { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity, 0.5, -0.5, 1e-9) },
        )
      : integerExitCode()
  const causes: Array<Arbitrary<unknown>> = [arbitraryTerminalExitCause()]
  if (constraints.garbageCauses !== false) causes.push(garbageCause())
  return fc.record({ code, cause: fc.oneof(...causes) }, { requiredKeys: ['code'] })
}

/** Every `WriteSettlement`: `accepted`, `refused` with each reason, `unverifiable` with each reason and both handoff values. */
export function arbitraryWriteSettlement(): Arbitrary<WriteSettlement> {
  return fc.oneof(
    fc.constant<WriteSettlement>({ kind: 'accepted' }),
    fc.constantFrom(...WRITE_REFUSAL_REASONS).map((reason): WriteSettlement => ({ kind: 'refused', reason })),
    fc
      .record({ reason: fc.constantFrom(...WRITE_UNVERIFIABLE_REASONS), bytesHandedToTransport: fc.boolean() })
      .map(({ reason, bytesHandedToTransport }): WriteSettlement => ({ kind: 'unverifiable', reason, bytesHandedToTransport })),
  )
}

/** Valid incarnation ids: 1 to `PTY_INCARNATION_ID_MAX_LENGTH` characters, branded. */
export function arbitraryPtyIncarnationId(): Arbitrary<PtyIncarnationId> {
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.uuid() },
      { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 24 }) },
      { weight: 1, arbitrary: fc.string({ minLength: PTY_INCARNATION_ID_MAX_LENGTH, maxLength: PTY_INCARNATION_ID_MAX_LENGTH }) },
    )
    .map((value) => toPtyIncarnationId(value))
}

const providerSequence = (): Arbitrary<ProviderSequence> =>
  fc.record({ value: fc.nat(), generation: fc.constantFrom<ProviderSequence['generation']>('continued', 'reset') })

/**
 * Provider spawn replies: fresh spawns and re-attaches, with and without pid, incarnation,
 * provider sequence, `exitedBeforeSpawnReply` and `hostReportsChildExitStatus` — every optional
 * field sometimes absent, as providers really send them.
 */
export function arbitraryPtySpawnResult(): Arbitrary<PtySpawnResult> {
  return fc.record(
    {
      id: fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 32 })),
      pid: fc.option(fc.integer({ min: 1, max: LINUX_PID_MAX }), { nil: null }),
      incarnationId: arbitraryPtyIncarnationId(),
      isReattach: fc.boolean(),
      exitedBeforeSpawnReply: fc.boolean(),
      providerSequence: providerSequence(),
      hostReportsChildExitStatus: fc.boolean(),
      cols: fc.integer({ min: 1, max: 500 }),
      rows: fc.integer({ min: 1, max: 200 }),
    },
    { requiredKeys: ['id'] },
  )
}

/**
 * Exits to script into the fake provider (`emitExit`, a spawn's `exit` or `exitBeforeReply`):
 * codes, signals, wrapper hosts and old senders without a cause. Never a stale-incarnation
 * override, so every generated exit ends the PTY it is emitted for.
 */
export function arbitraryFakeExit(): Arbitrary<FakeExit> {
  return fc.record(
    {
      exitCode: integerExitCode(),
      signal: signalField(),
      hostReportsChildExitStatus: fc.boolean(),
      withoutCause: fc.boolean(),
    },
    { requiredKeys: ['exitCode'] },
  )
}
