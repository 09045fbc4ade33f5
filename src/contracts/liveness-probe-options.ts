import { argumentRefusal } from './argument-refusal.js'
import { describeValue } from './describe-value.js'
import { isPtyIncarnationId, PTY_INCARNATION_ID_MAX_LENGTH, type PtyIncarnationId } from './incarnation.js'
import { findUnknownOption, isOptionsObject, optionNamesOf, unknownOptionMessage } from './known-options.js'
import { providerArgumentError } from './provider-arguments.js'
import type { PtyLivenessProbeOptions } from './provider.js'

/** The one option of a liveness probe. */
const PROBE_OPTION_NAMES = optionNamesOf<PtyLivenessProbeOptions>()('incarnationId')

/**
 * Internal (not exported from `ptykit/contracts`): the incarnation a `probeLiveness` call asks
 * about, checked — `undefined` when it names none. Every provider reads it here.
 *
 * Why refuse rather than ignore: an ignored option answers about whatever process holds the id
 * now, not the one asked about. `{ expectedIncarnationId }` — the name `write` and `shutdown` use —
 * answered `true` for a later incarnation under the id; `{ incarnationId: 5 }` the same.
 *
 * @throws TypeError naming the option (`code: 'invalid_option'`, `option`, `value`) for options
 * that are not an object (`option: 'options'`), an unknown option, or an `incarnationId` that is
 * not an incarnation id.
 */
export function probedIncarnation(options: unknown): PtyIncarnationId | undefined {
  if (options === undefined) return undefined
  if (!isOptionsObject(options)) {
    throw argumentRefusal(`Expected the liveness probe options to be an object (the \`options\` argument: { incarnationId? }), got ${describeValue(options)}`, 'options', options)
  }
  const unknown = findUnknownOption(options, PROBE_OPTION_NAMES)
  if (unknown !== undefined) {
    const value = (options as Record<string, unknown>)[unknown.name]
    throw argumentRefusal(`${unknownOptionMessage('', unknown)}, got ${describeValue(value)}`, unknown.name, value)
  }
  const { incarnationId } = options as { incarnationId?: unknown }
  if (incarnationId !== undefined && !isPtyIncarnationId(incarnationId)) {
    throw providerArgumentError('incarnationId', `an incarnation id (a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters)`, incarnationId, 'option')
  }
  return incarnationId
}
