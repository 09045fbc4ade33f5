import { describeSecretValue, describeValue } from '../contracts/describe-value.js'
import { checkLaunchShape } from '../contracts/launch-shape.js'
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

/**
 * Refuse the launch fields of a fresh spawn (`cwd`, `args`, `env`, `envToDelete`, `file`,
 * `command`) that every real provider refuses by their shape, with the node-pty provider's checks
 * (`checkLaunchShape`) and words.
 *
 * @throws TypeError with `code: 'invalid_spawn_option'`, naming the option and the value.
 */
export function checkFakeLaunchOptions(options: ProviderSpawnOptions): void {
  checkLaunchShape(options, refuse)
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
