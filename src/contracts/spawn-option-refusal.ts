import { describeSecretValue, describeValue } from './describe-value.js'

// Internal (not exported from `ptykit/contracts`): the shape of a refused spawn option, shared by the
// spawn pipeline's checks, the fake provider's and `assertNoMisspeltSpawnOption` (spawn-options.ts),
// so each refusal reads the same whichever refuses it.

/** A refused option: its name and the value given. */
export type OptionRefusal = { option: string; value: unknown }

/**
 * A refusal of a spawn option (the pipeline's own, the fake's, `assertNoMisspeltSpawnOption`'s): a `TypeError` that names the option and the value,
 * shaped as a provider's refusal (above), so both reach the caller the same way.
 */
export function spawnOptionRefusal(option: string, value: unknown, message: string): TypeError & OptionRefusal & { code: 'invalid_spawn_option' } {
  return Object.assign(new TypeError(message), { code: 'invalid_spawn_option' as const, option, value })
}

/**
 * {@link spawnOptionRefusal} in the standard words — "Expected the `option` option to be
 * `expected`, got `value`" — for the pipeline's checks and the fake's (which refuses what real
 * providers refuse, in their words). `secret`: a value that may be a secret (an environment value)
 * is neither shown nor kept on the error.
 */
export function spawnOptionFieldRefusal(option: string, expected: string, value: unknown, secret = false): TypeError & OptionRefusal & { code: 'invalid_spawn_option' } {
  const shown = secret ? describeSecretValue(value) : describeValue(value)
  return spawnOptionRefusal(option, secret ? undefined : value, `Expected the \`${option}\` option to be ${expected}, got ${shown}`)
}
