import { defineErrorBrand } from '../contracts/error-brand.js'
import { describeSecretValue, describeValue } from '../contracts/describe-value.js'

/**
 * A provider, spawn or resize option the SSH provider refuses. Raised before any connection or
 * channel is opened — except for a `cwd` or a `file` the remote refused (missing, not a directory,
 * not an executable file): the launch's shell checks those before it starts the program. A `TypeError` (a programmer error) with a stable `code`, the option's name and
 * the refused value — the shape of every provider's option refusal, so the spawn pipeline reports
 * a refused spawn option as `invalid_spawn_options` naming it. Secret values (`privateKey`,
 * `passphrase`, an `env` value) are never echoed: the message shows their type only, and `value`
 * is not kept. Its `code` is `invalid_option` for a `resize` size (the code `PtyProvider.resize`
 * documents, which every provider's resize refusal carries).
 */
export class SshOptionError extends TypeError {
  /** The stable code (the one the node-pty provider's option errors carry too; `invalid_option` for a resize's size); match on it, never on the message. */
  readonly code: 'invalid_spawn_option' | 'invalid_option'
  /** The name of the refused option (`port`, `knownHostsPath`, `cols`…). */
  readonly option: string
  /** The refused value, as given; `undefined` for a secret option. */
  readonly value: unknown

  /**
   * Create the error.
   *
   * @param option - the option's name, as the caller spelled it
   * @param expected - what the option must be, as a phrase ("a positive integer")
   * @param value - the refused value (never shown for a secret option)
   * @param secret - true for a secret value (a key, a passphrase, an environment value): it is not shown
   * @param detail - why the value does not qualify, when its shape alone does not say (`it does not exist on ssh:box`)
   * @param code - `invalid_option` for a resize's size; else the default, a spawn's code
   * @param noun - `'argument'` for a method's argument (a `resize` size, a listener), as every provider words it; else an option
   */
  constructor(
    option: string,
    expected: string,
    value: unknown,
    secret = false,
    detail?: string,
    code: 'invalid_spawn_option' | 'invalid_option' = 'invalid_spawn_option',
    noun: 'option' | 'argument' = 'option',
  ) {
    super(`Expected the \`${option}\` ${noun} to be ${expected}, got ${secret ? describeSecretValue(value) : describeValue(value)}${detail === undefined ? '' : `: ${detail}`}`)
    this.code = code
    this.option = option
    this.value = secret ? undefined : value
    SSH_OPTION_ERROR_BRAND.mark(this)
  }
}
const SSH_OPTION_ERROR_BRAND = defineErrorBrand(SshOptionError, 'SshOptionError')

/** True for an {@link SshOptionError}, also across duplicate copies of the package. */
export function isSshOptionError(value: unknown): value is SshOptionError {
  return SSH_OPTION_ERROR_BRAND.is(value)
}
