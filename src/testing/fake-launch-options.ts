import { describeSecretValue, describeValue } from '../contracts/describe-value.js'
import { ENVIRONMENT_KEYS_EXPECTED, ENVIRONMENT_RECORD_EXPECTED, isEnvironmentRecord, isEnvironmentVariableName } from '../contracts/environment-record.js'
import { MAX_PTY_DIMENSION, type ProviderSpawnOptions } from '../contracts/index.js'
import { isPtyDimension } from '../contracts/pty-dimension.js'

// The launch fields a real provider refuses by their shape alone, refused by the fake the same way
// (option name, wording, `code: 'invalid_spawn_option'`), so a test suite over the fake sees the
// refusal production sees. What only a real host can tell — a program or a `cwd` that does not
// exist — the fake does not check: it runs nothing (script a spawn's `fail` to play that).

/** A refusal shaped as every provider's: a `TypeError` with `code`, `option` and `value`. */
function refuse(option: string, expected: string, value: unknown, secret = false): TypeError {
  const shown = secret ? describeSecretValue(value) : describeValue(value)
  return Object.assign(new TypeError(`Expected the \`${option}\` option to be ${expected}, got ${shown}`), {
    code: 'invalid_spawn_option' as const,
    option,
    value: secret ? undefined : value,
  })
}

/** A string a real provider can pass to the OS: NUL would truncate it there. */
function checkText(option: string, value: unknown, allowEmpty: boolean, secret = false): void {
  if (typeof value !== 'string') throw refuse(option, 'a string', value, secret)
  if (!allowEmpty && value.length === 0) throw refuse(option, 'a non-empty string', value, secret)
  if (value.includes('\0')) throw refuse(option, 'a string without NUL characters', value, secret)
}

/**
 * Refuse the launch fields of a fresh spawn (`cwd`, `args`, `env`, `envToDelete`, `file`,
 * `command`) that every real provider refuses by their shape, in the node-pty provider's order and
 * words.
 *
 * @throws TypeError with `code: 'invalid_spawn_option'`, naming the option and the value.
 */
export function checkFakeLaunchOptions(options: ProviderSpawnOptions): void {
  if (options.cwd !== undefined) checkText('cwd', options.cwd, false)
  if (options.args !== undefined) {
    if (!Array.isArray(options.args)) throw refuse('args', 'an array of strings', options.args)
    options.args.forEach((arg: unknown, index) => checkText(`args[${index}]`, arg, true))
  }
  if (options.env !== undefined) {
    if (!isEnvironmentRecord(options.env)) throw refuse('env', ENVIRONMENT_RECORD_EXPECTED, options.env, true)
    for (const [key, value] of Object.entries(options.env)) {
      if (!isEnvironmentVariableName(key)) throw refuse('env', ENVIRONMENT_KEYS_EXPECTED, key)
      // An environment value may be a secret (a token, a password): a refusal never echoes it.
      checkText(`env.${key}`, value, true, true)
    }
  }
  if (options.envToDelete !== undefined) {
    if (!Array.isArray(options.envToDelete)) throw refuse('envToDelete', 'an array of variable names', options.envToDelete)
    options.envToDelete.forEach((name: unknown, index) => checkText(`envToDelete[${index}]`, name, false))
  }
  if (options.file !== undefined) checkText('file', options.file, false)
  if (options.command !== undefined) checkText('command', options.command, true)
}

/**
 * Refuse a spawn's `cols` or `rows` that is not an integer from 1 to `MAX_PTY_DIMENSION`, as the
 * real providers refuse it: with `code: 'invalid_spawn_option'`, `option` and `value` (a plain
 * `TypeError` before, which a caller matching on `code` did not recognise as a refused option).
 *
 * @throws TypeError with `code: 'invalid_spawn_option'`, naming the option and the value.
 */
export function checkFakeDimension(option: 'cols' | 'rows', value: unknown): void {
  if (!isPtyDimension(value)) throw refuse(option, `an integer from 1 to ${MAX_PTY_DIMENSION}`, value)
}
