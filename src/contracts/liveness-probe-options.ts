import { describeValue } from './describe-value.js'
import { isPtyIncarnationId, PTY_INCARNATION_ID_MAX_LENGTH, type PtyIncarnationId } from './incarnation.js'
import { assertKnownOptions, isOptionsObject, optionNamesOf } from './known-options.js'
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
 * @throws TypeError naming the option for options that are not an object, an unknown option, or
 * an `incarnationId` that is not an incarnation id.
 */
export function probedIncarnation(options: unknown): PtyIncarnationId | undefined {
  if (options === undefined) return undefined
  if (!isOptionsObject(options)) throw new TypeError(`Expected the liveness probe options to be an object ({ incarnationId? }), got ${describeValue(options)}`)
  assertKnownOptions('', options, PROBE_OPTION_NAMES)
  const { incarnationId } = options as { incarnationId?: unknown }
  if (incarnationId !== undefined && !isPtyIncarnationId(incarnationId)) {
    throw new TypeError(`Expected the \`incarnationId\` option to be an incarnation id (a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters), got ${describeValue(incarnationId)}`)
  }
  return incarnationId
}
