import { isAbsolute, resolve } from 'node:path'
import { MAX_PTY_DIMENSION, type ProviderSpawnOptions } from '../contracts/index.js'
import { findMisspeltSpawnOption } from '../contracts/spawn-options.js'
import { describeSecretValue, describeValue } from '../contracts/describe-value.js'
import { ENVIRONMENT_KEYS_EXPECTED, ENVIRONMENT_RECORD_EXPECTED, isEnvironmentRecord, isEnvironmentVariableName } from '../contracts/environment-record.js'
import { withoutHostTerminalVariables } from '../node-pty/launch-plan.js'
import type { SpawnInheritance } from '../node-pty/spawn-inheritance.js'
import { isPtyHostError, PtyHostError } from './pty-host-error.js'

/**
 * The params of a `spawn` request: the session id and the launch fields the caller set (exactly
 * `SPAWN_LAUNCH_KEYS` of `protocol.ts`, which the host reads back; functions never cross the wire).
 *
 * Why field by field rather than a loop over the keys: this runs in the turn of the app's spawn
 * call, whose code V8 rarely optimizes (a spawn is rare), and there a `for…of` with keyed reads and
 * writes is more work than twelve plain property reads.
 */
export function spawnRequestParams(sessionId: string, options: ProviderSpawnOptions): Record<string, unknown> {
  const params: Record<string, unknown> = { sessionId }
  if (options.file !== undefined) params.file = options.file
  if (options.args !== undefined) params.args = options.args
  if (options.command !== undefined) params.command = options.command
  if (options.cols !== undefined) params.cols = options.cols
  if (options.rows !== undefined) params.rows = options.rows
  if (options.cwd !== undefined) params.cwd = options.cwd
  if (options.env !== undefined) params.env = options.env
  if (options.envToDelete !== undefined) params.envToDelete = options.envToDelete
  if (options.scopeId !== undefined) params.scopeId = options.scopeId
  if (options.slotKey !== undefined) params.slotKey = options.slotKey
  if (options.claimKey !== undefined) params.claimKey = options.claimKey
  if (options.metadata !== undefined) params.metadata = options.metadata
  return params
}

/** A refused `env` (or `env.<key>`): its value may be a secret, so it is neither shown nor kept. */
function envOptionError(option: string, expected: string, shown: string): PtyHostError {
  return new PtyHostError('invalid_spawn_option', `Expected the \`${option}\` option to be ${expected}, got ${shown}`, { option })
}

/**
 * The refusal of an `env` the host would not receive as given, as the node-pty provider refuses
 * it (its `buildEnvironment`): a record (`isEnvironmentRecord`: no array, no `Map` or other
 * iterable — JSON would send a `Map` as `{}`, its entries dropped in silence) whose every value is
 * a string (JSON drops an `undefined` value, which the node-pty provider refuses). `process.env`
 * passes. Keys and the rest (NUL, `=`) are left to the host's provider, which refuses them with
 * the same messages. Never shows a value.
 */
function envRefusal(env: unknown): PtyHostError | undefined {
  if (!isEnvironmentRecord(env)) return envOptionError('env', ENVIRONMENT_RECORD_EXPECTED, describeSecretValue(env))
  // Own enumerable properties, as JSON sends them and the node-pty provider reads them.
  for (const [key, value] of Object.entries(env)) {
    if (typeof value !== 'string') return envOptionError(`env.${key}`, 'a string', describeSecretValue(value))
  }
  return undefined
}

/**
 * The refusal of a spawn option that misspells one (`cdw`, `sessionID`, `expectedIncarnationID`)
 * or is a likely mistake for one (`id`, `cmd`): it would be ignored, the default used — checked for
 * an attach-only spawn too, where a misspelt `expectedIncarnationId` attached without its fence. An
 * `env`'s value may hold secrets: neither shown nor kept.
 */
export function misspeltSpawnOptionRefusal(options: ProviderSpawnOptions): PtyHostError | undefined {
  const misspelt = findMisspeltSpawnOption(options)
  if (misspelt === undefined) return undefined
  const shown = misspelt.secret ? describeSecretValue(misspelt.value) : describeValue(misspelt.value)
  const message = `Expected the \`${misspelt.name}\` option to be ${misspelt.expected}, got ${shown}`
  return new PtyHostError('invalid_spawn_option', message, misspelt.secret ? { option: misspelt.name } : { option: misspelt.name, value: misspelt.value })
}

/**
 * The refusal of spawn options the host would not receive as given, or `undefined`: a spawn
 * request crosses to the host as JSON. A `cols` or `rows` JSON cannot carry (NaN, ±Infinity) is
 * refused naming it. An `env` that is no record of strings (a `Map`, an array) is refused
 * (see `envRefusal`; option `env` or `env.<key>`, the value never shown nor kept). A `metadata` JSON cannot serialize (a BigInt, a circular
 * object, a `toJSON` that throws) is refused — before, the request failed to serialize and the
 * spawn failed `provider_spawn_failed` with JSON's message, naming no option. (What JSON drops —
 * a function, an `undefined` — is dropped, as for any JSON payload.) Checked before the provider
 * connects or sends anything: the pipeline reports it as `invalid_spawn_options`, nothing started.
 * The refusal keeps no `value` (the metadata is no JSON scalar); JSON's reason is its `cause`.
 * An option that misspells a spawn option (`cdw`, `sessionID`) or is a likely mistake for one
 * (`id`, `cmd`) is refused naming it and the option meant: it would be ignored.
 */
export function spawnOptionsRefusal(options: ProviderSpawnOptions): PtyHostError | undefined {
  const misspelt = misspeltSpawnOptionRefusal(options)
  if (misspelt !== undefined) return misspelt
  // JSON sends NaN and ±Infinity as `null`, which the host reads as "no size": a `rows: NaN` spawn
  // started at the default size, where every other provider refuses it. Refused here, in the
  // host's words (the node-pty provider's, every provider's: "an integer from 1 to 65535"); any
  // other bad size reaches the host as given.
  for (const option of ['cols', 'rows'] as const) {
    const value = options[option]
    if (typeof value === 'number' && !Number.isFinite(value)) {
      return new PtyHostError('invalid_spawn_option', `Expected the \`${option}\` option to be an integer from 1 to ${MAX_PTY_DIMENSION}, got ${describeValue(value)}`, { option, value })
    }
  }
  if (options.env !== undefined) {
    const refusal = envRefusal(options.env)
    if (refusal !== undefined) return refusal
  }
  const { metadata } = options
  if (metadata !== undefined) {
    try {
      JSON.stringify(metadata)
    } catch (error) {
      // The first line: V8's message for a circle goes on to draw it, property by property.
      const why = error instanceof Error ? error.message.split('\n')[0] : String(error)
      return new PtyHostError(
        'invalid_spawn_option',
        `Expected the \`metadata\` option to be a value JSON can serialize (it crosses to the pty host as JSON), got one it cannot: ${why}`,
        { cause: error, option: 'metadata' },
      )
    }
  }
  return undefined
}

/**
 * An `attach` that a spawn under a known session id sends first, refused for its `ptyId` (too large
 * for a frame): the caller's `sessionId` is the option at fault, refused as a spawn option (the
 * pipeline's `invalid_spawn_options`, nothing started) rather than as a failed spawn.
 */
export function asSessionIdRefusal(error: unknown): unknown {
  if (!isPtyHostError(error) || error.code !== 'invalid_option' || error.option !== 'ptyId') return error
  return new PtyHostError('invalid_spawn_option', error.message.replace('`ptyId`', '`sessionId`'), { cause: error, ptyId: error.ptyId, hostCode: error.hostCode, option: 'sessionId', value: error.value })
}

/**
 * Add the app's environment and working directory to a spawn request's `params` (the provider's
 * `spawnEnvironment: 'app'`), read now, at the spawn, as the node-pty provider reads them: the
 * PTY inherits what the app has when it asks, not what the host process was started with.
 *
 * - A host that says it takes them (`hostInherits`, its welcome's `appEnvironment`): `process.env`
 *   as `inheritedEnv` and `process.cwd()` as `defaultCwd`. `process.env` is handed on as it is:
 *   the request is serialized in this turn, once (no copy of it is made).
 * - A host of an older ptykit, which ignores those fields: the closest it can do. The app's
 *   environment, less the host-terminal variables, goes as the spawn's `env` with the caller's
 *   `env` on top (their `envToDelete` still applies after), and a spawn without `cwd` (or with a
 *   relative one) gets the app's directory as `cwd`. What stays of the host's own: a variable the
 *   host has and the app has not, and its `$SHELL` as the default shell.
 *
 * Returns the refusal of a spawn that needs the app's directory (no `cwd`, or a relative one) while
 * `process.cwd()` cannot tell it (the directory was removed): `invalid_spawn_option` naming `cwd`.
 * Never shows an environment value.
 */
export function addAppEnvironment(params: Record<string, unknown>, options: ProviderSpawnOptions, hostInherits: boolean): PtyHostError | undefined {
  const { cwd } = options
  const needsCwd = cwd === undefined || (typeof cwd === 'string' && !isAbsolute(cwd))
  let appCwd: string | undefined
  try {
    appCwd = process.cwd()
  } catch (error) {
    if (needsCwd) {
      const why = (error as { code?: unknown }).code ?? (error as Error).message
      return new PtyHostError(
        'invalid_spawn_option',
        `Expected the \`cwd\` option to be an absolute path, got ${describeValue(cwd)}: a spawn that names no \`cwd\` (or a relative one) starts in the app's working directory, which cannot be read (${String(why)})`,
        { cause: error, option: 'cwd', value: cwd },
      )
    }
  }
  if (hostInherits) {
    params.inheritedEnv = process.env
    if (appCwd !== undefined) params.defaultCwd = appCwd
    return undefined
  }
  const env = withoutHostTerminalVariables(process.env)
  if (options.env !== undefined) Object.assign(env, options.env)
  params.env = env
  if (needsCwd && appCwd !== undefined) params.cwd = cwd === undefined ? appCwd : resolve(appCwd, cwd as string)
  return undefined
}

/** A refused field of a spawn request's inheritance: named, its value shown only when it is no environment. */
function inheritanceRefusal(field: string, expected: string, shown: string): PtyHostError {
  return new PtyHostError('invalid_option', `Expected the \`${field}\` field of a spawn request to be ${expected}, got ${shown}`, { option: field })
}

/**
 * In the host: what a spawn request carries of its app (see {@link addAppEnvironment}) — the
 * environment and working directory its PTY inherits in place of the host's —, checked, or
 * `undefined` when it carries neither (an app that asked for the host's, or of an older ptykit).
 * Checked as the node-pty provider checks its `inheritedEnv` and `defaultCwd` options: a record of
 * strings whose keys are non-empty without `=` or NUL and whose values hold no NUL (what
 * `process.env` always is), and an absolute path without NUL.
 *
 * @throws PtyHostError `invalid_option` naming the field (`inheritedEnv`, `inheritedEnv.<name>` or
 * `defaultCwd`); an environment value is never shown nor kept.
 */
export function spawnInheritanceOfRequest(params: Record<string, unknown>): SpawnInheritance | undefined {
  const { inheritedEnv, defaultCwd } = params
  if (inheritedEnv === undefined && defaultCwd === undefined) return undefined
  const inheritance: { env?: Record<string, string>; defaultCwd?: string } = {}
  if (inheritedEnv !== undefined) {
    if (!isEnvironmentRecord(inheritedEnv)) throw inheritanceRefusal('inheritedEnv', ENVIRONMENT_RECORD_EXPECTED, describeSecretValue(inheritedEnv))
    for (const [key, value] of Object.entries(inheritedEnv)) {
      if (!isEnvironmentVariableName(key)) throw inheritanceRefusal('inheritedEnv', ENVIRONMENT_KEYS_EXPECTED, describeValue(key))
      if (typeof value !== 'string' || value.includes('\0')) throw inheritanceRefusal(`inheritedEnv.${key}`, 'a string without NUL characters', describeSecretValue(value))
    }
    inheritance.env = inheritedEnv as Record<string, string>
  }
  if (defaultCwd !== undefined) {
    if (typeof defaultCwd !== 'string' || !isAbsolute(defaultCwd) || defaultCwd.includes('\0')) {
      throw new PtyHostError('invalid_option', `Expected the \`defaultCwd\` field of a spawn request to be an absolute path without NUL characters, got ${describeValue(defaultCwd)}`, {
        option: 'defaultCwd',
        value: defaultCwd,
      })
    }
    inheritance.defaultCwd = defaultCwd
  }
  return inheritance
}
