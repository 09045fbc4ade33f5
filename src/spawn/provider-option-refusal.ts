/**
 * The contract by which a provider says "I refuse this spawn option, and started nothing": it
 * throws (or rejects with) an error whose `code` is `'invalid_spawn_option'` and whose `option` is
 * the option's name (the node-pty provider's `NodePtyOptionError` is one). The pipeline reports it
 * as `invalid_spawn_options` with that name, like a refusal of its own validation — not as
 * `provider_spawn_failed`.
 */

/** The refused option's name when `error` is a provider's option refusal, else `undefined`. */
export function providerRefusedOption(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  try {
    const candidate = error as { code?: unknown; option?: unknown }
    if (candidate.code !== 'invalid_spawn_option' || typeof candidate.option !== 'string') return undefined
    return candidate.option
  } catch {
    return undefined
  }
}
