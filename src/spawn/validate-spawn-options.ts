import { isOptionsObject } from '../contracts/known-options.js'
import { assertNoMisspeltSpawnOption } from '../contracts/spawn-options.js'
import { ENVIRONMENT_RECORD_EXPECTED, isEnvironmentRecord } from '../contracts/environment-record.js'
import { describeCodeUnit, loneSurrogateIndex } from '../contracts/well-formed-text.js'
import { describeValue } from '../contracts/describe-value.js'
import { assertPtyDimension, type PtySpawnOptions } from '../contracts/index.js'
import { spawnOptionFieldRefusal, spawnOptionRefusal } from '../contracts/spawn-option-refusal.js'
import type { PtySpawnDeps } from './types.js'
import { describeSlot } from './slot-owner-views.js'

/** `secret`: a value that may be a secret (an environment value) is neither shown nor kept on the error. */
function fail(option: string, expected: string, value: unknown, secret = false): never {
  throw spawnOptionFieldRefusal(option, expected, value, secret)
}

function checkDimension(option: 'cols' | 'rows', value: unknown): void {
  try {
    assertPtyDimension(option, value)
  } catch (error) {
    throw spawnOptionRefusal(option, value, (error as Error).message)
  }
}

function checkNonEmptyString(option: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0) {
    fail(option, 'a non-empty string', value)
  }
}

/**
 * Refuse launch text that is not well-formed UTF-16 (a lone surrogate): the program would get
 * U+FFFD in its place, not what the caller wrote. Type checks are the provider's.
 */
function checkWellFormed(option: string, value: unknown, secret = false): void {
  if (typeof value !== 'string') return
  const index = loneSurrogateIndex(value)
  if (index !== -1) fail(option, `well-formed UTF-16 (a lone surrogate, ${describeCodeUnit(value, index)} at index ${index}, would reach the program as U+FFFD)`, value, secret)
}

/** {@link checkWellFormed} over the launch options a program receives: file, args, command, cwd, env. */
function checkLaunchText(options: PtySpawnOptions): void {
  checkWellFormed('file', options.file)
  checkWellFormed('command', options.command)
  checkWellFormed('cwd', options.cwd)
  if (Array.isArray(options.args)) options.args.forEach((arg, index) => checkWellFormed(`args[${index}]`, arg))
  const env: unknown = options.env
  if (typeof env === 'object' && env !== null) {
    for (const [name, value] of Object.entries(env)) {
      checkWellFormed(`env.${name}`, name)
      checkWellFormed(`env.${name}`, value, true)
    }
  }
}

function checkKeyed(option: 'slot' | 'claim', value: unknown): void {
  if (typeof value !== 'object' || value === null) {
    fail(option, 'an object with a non-empty `key`', value)
  }
  const keyed = value as { key?: unknown; scopeId?: unknown }
  if (typeof keyed.key !== 'string' || keyed.key.length === 0) {
    fail(`${option}.key`, 'a non-empty string', keyed.key)
  }
  if (keyed.scopeId !== undefined) checkNonEmptyString(`${option}.scopeId`, keyed.scopeId)
}

/**
 * Check spawn options before any side effect. A malformed option is a programmer error.
 *
 * @throws TypeError naming the option and the value: `cols`/`rows` not a positive integer up to
 * `MAX_PTY_DIMENSION` (65 535); `slot` together with `claim`; an empty `slot.key`, `claim.key`,
 * `hostId`, `scopeId`, `sessionId` or `preAllocatedHandle`; a `signal` that is not an AbortSignal;
 * an `onPtySpawnCommitted` that is not a function; an `isNewSession` that is not a boolean; a
 * `metadata` that is not an object; a `slotCreateClaim` that is not a function, or without `slot`;
 * a `file`, `args[i]`, `command`, `cwd` or `env` name or value holding a lone surrogate; a
 * provider's attach option (`attachOnly`, `expectedIncarnationId`), which a spawn would ignore
 * and start a process; an option that misspells a spawn option (`cdw`, `sessionID`, `col`) or is a
 * likely mistake for one (`id`, `ptyId`, `cmd`), which would be ignored (`assertNoMisspeltSpawnOption`).
 */
export function validatePtySpawnOptions(options: PtySpawnOptions): void {
  if (!isOptionsObject(options)) {
    throw spawnOptionRefusal('options', options, `Expected the spawn options to be an object, got ${describeValue(options)}`)
  }
  // A near miss of a spawn option (`cdw`, `sessionID`) or a likely mistake (`id`): it would be
  // ignored, the default used. Any other name passes: hosts pass their own records.
  assertNoMisspeltSpawnOption(options)
  // Each check runs only for an option that is present: this runs once per spawn, in the caller's
  // turn, mostly over options that set a few of these.
  // Before the launch text is read from it: a Map's variables are not its entries (they would be
  // dropped in silence by every provider). Its values may be secrets: never shown.
  if (options.env !== undefined && !isEnvironmentRecord(options.env)) fail('env', ENVIRONMENT_RECORD_EXPECTED, options.env, true)
  checkLaunchText(options)
  if (options.cols !== undefined) checkDimension('cols', options.cols)
  if (options.rows !== undefined) checkDimension('rows', options.rows)
  if (options.hostId !== undefined) checkNonEmptyString('hostId', options.hostId)
  if (options.scopeId !== undefined) checkNonEmptyString('scopeId', options.scopeId)
  if (options.sessionId !== undefined) checkNonEmptyString('sessionId', options.sessionId)
  if (options.preAllocatedHandle !== undefined) checkNonEmptyString('preAllocatedHandle', options.preAllocatedHandle)
  if (options.slot !== undefined) checkKeyed('slot', options.slot)
  if (options.claim !== undefined) checkKeyed('claim', options.claim)
  if (options.slot !== undefined && options.claim !== undefined) {
    throw spawnOptionRefusal(
      'claim',
      options.claim,
      `Expected at most one of the \`slot\` and \`claim\` options, got both (${describeSlot(options.slot, 'slot')}, claim ${JSON.stringify(options.claim.key)})`,
    )
  }
  const signal: unknown = options.signal
  if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof (signal as { aborted?: unknown }).aborted !== 'boolean')) {
    fail('signal', 'an AbortSignal', signal)
  }
  if (options.onPtySpawnCommitted !== undefined && typeof options.onPtySpawnCommitted !== 'function') {
    fail('onPtySpawnCommitted', 'a function', options.onPtySpawnCommitted)
  }
  if (options.isNewSession !== undefined && typeof options.isNewSession !== 'boolean') fail('isNewSession', 'a boolean', options.isNewSession)
  const metadata: unknown = options.metadata
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) {
    fail('metadata', 'an object', metadata)
  }
  // A provider's attach options, given to a spawn: it would start a process where the caller
  // asked never to start one (spawn options are otherwise not checked for names they do not know,
  // only for near misses above: hosts pass their own records).
  const asProvider = options as { attachOnly?: unknown; expectedIncarnationId?: unknown }
  for (const option of ['attachOnly', 'expectedIncarnationId'] as const) {
    if (asProvider[option] !== undefined) {
      throw spawnOptionRefusal(
        option,
        asProvider[option],
        `\`${option}\` is a provider's attach option, not a spawn option: a spawn starts a process (or re-attaches to its slot's live owner). To attach to a live PTY without ever starting one, call \`controller.attach(id)\``,
      )
    }
  }
  if (options.slotCreateClaim !== undefined) {
    if (typeof options.slotCreateClaim !== 'function') fail('slotCreateClaim', 'a function (the release `claimSlotCreate` returned)', options.slotCreateClaim)
    // A claim is of a slot: without one it would be ignored, and the create it was taken for run unguarded.
    if (options.slot === undefined) fail('slotCreateClaim', 'given only with the `slot` it was claimed for', options.slotCreateClaim)
  }
}

/**
 * Check the pipeline's dependencies against the options: a host wiring error, not a client one.
 *
 * @throws TypeError naming the dependency: `resolveProvider` not a function; a `slot` spawn
 * without `store`; a `claim` spawn without `claims`.
 */
export function validatePtySpawnDeps(deps: PtySpawnDeps, options: PtySpawnOptions): void {
  if (typeof deps !== 'object' || deps === null) {
    throw new TypeError(`Expected the spawn dependencies to be an object, got ${describeValue(deps)}`)
  }
  if (typeof deps.resolveProvider !== 'function') {
    throw new TypeError(`Expected the \`resolveProvider\` dependency to be a function, got ${describeValue(deps.resolveProvider)}`)
  }
  if (options.slot !== undefined && deps.store === undefined) {
    throw new TypeError(
      `Expected the \`store\` dependency because the spawn names ${describeSlot(options.slot, 'slot')}, got undefined`,
    )
  }
  if (options.claim !== undefined && deps.claims === undefined) {
    throw new TypeError(
      `Expected the \`claims\` dependency because the spawn names claim ${JSON.stringify(options.claim.key)}, got undefined`,
    )
  }
}
