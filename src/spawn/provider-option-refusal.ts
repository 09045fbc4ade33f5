import { describeSecretValue, describeValue } from '../contracts/describe-value.js'

/**
 * The contract by which a provider says "I refuse this spawn option, and started nothing": it
 * throws (or rejects with) an error whose `code` is `'invalid_spawn_option'`, whose `option` is
 * the option's name and whose `value` is the refused value (the node-pty provider's
 * `NodePtyOptionError` and the SSH provider's `SshOptionError` are such errors). The pipeline
 * reports it as `invalid_spawn_options` with that name and value, like a refusal of its own
 * validation — not as `provider_spawn_failed`.
 */

/** A refused option: its name and the value given. */
export type OptionRefusal = { option: string; value: unknown }

/**
 * The refused option when `error` is an option refusal (a provider's, or the pipeline's own), else
 * `undefined`. `code`: the refusal's code — `invalid_spawn_option` for a spawn, `invalid_option`
 * for another call (a provider refusing a `resize` past a limit of its own).
 */
export function refusedOptionOf(error: unknown, code: 'invalid_spawn_option' | 'invalid_option' = 'invalid_spawn_option'): OptionRefusal | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  try {
    const candidate = error as { code?: unknown; option?: unknown; value?: unknown }
    if (candidate.code !== code || typeof candidate.option !== 'string') return undefined
    return { option: candidate.option, value: candidate.value }
  } catch {
    return undefined
  }
}

/**
 * The pipeline's own refusal of a spawn option: a `TypeError` that names the option and the value,
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
