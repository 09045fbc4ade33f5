import { defineErrorBrand } from '../contracts/error-brand.js'
import { describeSecretValue, describeValue } from '../contracts/describe-value.js'

/**
 * A spawn, resize or provider option the node-pty provider refuses. Raised before any process is
 * started (or touched), so a refused spawn never leaves anything behind.
 *
 * It is a `TypeError` because a bad option is a programmer error, and it carries a stable `code`
 * and the option's name so that a host can still tell it apart without parsing the message. An
 * environment value (`env`, `env.NAME`) may be a secret: it is never echoed — the message shows
 * its type only, and `value` is not kept.
 *
 * Its `code` is `invalid_spawn_option` for a spawn or provider option, `invalid_option` for a
 * `resize` size (the code `PtyProvider.resize` documents, which every provider's resize refusal
 * carries).
 */
export class NodePtyOptionError extends TypeError {
  /** The stable code (`invalid_option` for a resize's size and a call's options: `shutdown`'s, `listProcesses`'); match on it, never on the message. */
  readonly code: 'invalid_spawn_option' | 'invalid_option'
  /** The name of the refused option (`cols`, `cwd`, `env.PATH`…). */
  readonly option: string
  /** The refused value, as given; `undefined` for a secret one (an environment value). */
  readonly value: unknown

  /**
   * Create the error.
   *
   * @param option - the option's name, as the caller spelled it
   * @param expected - what the option must be, as a phrase ("a positive integer")
   * @param value - the refused value
   * @param detail - an optional extra sentence (why the value fails)
   * @param secret - true for a value that may be a secret (an environment value): it is not shown
   * @param code - `invalid_option` for a resize's size and a call's options; else the default, a spawn's code
   * @param noun - `'argument'` for a method's argument (a `resize` size), as every provider words it; else an option
   */
  constructor(
    option: string,
    expected: string,
    value: unknown,
    detail?: string,
    secret = false,
    code: 'invalid_spawn_option' | 'invalid_option' = 'invalid_spawn_option',
    noun: 'option' | 'argument' = 'option',
  ) {
    super(
      `Expected the \`${option}\` ${noun} to be ${expected}, got ${secret ? describeSecretValue(value) : describeValue(value)}${detail === undefined ? '' : `: ${detail}`}`,
    )
    this.code = code
    this.option = option
    this.value = secret ? undefined : value
    NODE_PTY_OPTION_ERROR_BRAND.mark(this)
  }
}
const NODE_PTY_OPTION_ERROR_BRAND = defineErrorBrand(NodePtyOptionError, 'NodePtyOptionError')

/** True for a {@link NodePtyOptionError}, also across duplicate copies of the package. */
export function isNodePtyOptionError(value: unknown): value is NodePtyOptionError {
  return NODE_PTY_OPTION_ERROR_BRAND.is(value)
}
