import type { OptionRefusal } from '../contracts/spawn-option-refusal.js'

/**
 * The contract by which a provider says "I refuse this spawn option, and started nothing": it
 * throws (or rejects with) an error whose `code` is `'invalid_spawn_option'`, whose `option` is
 * the option's name and whose `value` is the refused value (the node-pty provider's
 * `NodePtyOptionError` and the SSH provider's `SshOptionError` are such errors). The pipeline
 * reports it as `invalid_spawn_options` with that name and value, like a refusal of its own
 * validation — not as `provider_spawn_failed`.
 */

export type { OptionRefusal } from '../contracts/spawn-option-refusal.js'

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
