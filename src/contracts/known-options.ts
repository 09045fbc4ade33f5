/**
 * Option names nobody reads. TypeScript catches a misspelt option in an object literal, but not in
 * plain JavaScript nor in an object built elsewhere, and a misspelt option was silently ignored:
 * `dispose({ stopPTYs: false })` stopped every PTY it was meant to keep running. Checked where an
 * ignored option would do something else than asked (lifecycle and configuration: the controller's
 * and the providers' options, `dispose`; the controller's per-call options, a liveness probe's),
 * not on per-call records a host may pass around whole (spawn options: only a near miss of a spawn
 * option's name is refused there, by `findMisspeltSpawnOption` in `spawn-options.ts`).
 */

import { argumentRefusal } from './argument-refusal.js'
import { describeValue } from './describe-value.js'

/**
 * Whether `value` can be an options object: an object that is neither `null` nor an array. Why not
 * `typeof value === 'object'` alone: an array passes it, and every option it was meant to hold
 * would be silently ignored (`spawn([{ cols: 100 }])` spawned with the defaults).
 */
export function isOptionsObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Throw a `TypeError` (`code: 'invalid_option'`, `option`, `value`) unless `options` is `undefined` or an options object holding only `known`
 * options: "Expected the fake provider options to be an object, got null (null)", or the unknown
 * option named with the one it likely misspells. For a factory whose module has no option error
 * class of its own.
 */
export function assertOptionsBag(what: string, options: unknown, known: readonly string[]): asserts options is object | undefined {
  if (options !== undefined && !isOptionsObject(options)) throw argumentRefusal(`Expected the ${what} options to be an object, got ${describeValue(options)}`, 'options', options)
  assertKnownOptions('', options, known)
}

/** An option nobody reads: its name, and a hint at the option meant (or the known ones). */
export type UnknownOption = { name: string; hint: string }

/** The first option of `options` not in `known`; `undefined` when all are known. */
export function findUnknownOption(options: object | undefined, known: readonly string[]): UnknownOption | undefined {
  if (options === undefined) return undefined
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue
    const meant = closestOption(name, known)
    const hint = meant === undefined ? `the known ones are ${known.map((option) => `\`${option}\``).join(', ')}` : `did you mean \`${meant}\`?`
    return { name, hint }
  }
  return undefined
}

/**
 * The first option of `options` that is not one of `known` but likely misspells one (`timeoutMS`
 * for `timeoutMs`); `undefined` when there is none. For an options object that may carry other
 * options too (a provider's shutdown options hold `keepHistory`, `expectedIncarnationId`…), where
 * only a near miss of a known name can be refused.
 */
export function findMisspeltOption(options: object | undefined, known: readonly string[]): UnknownOption | undefined {
  if (options === undefined) return undefined
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue
    const meant = closestOption(name, known)
    if (meant !== undefined) return { name, hint: `did you mean \`${meant}\`?` }
  }
  return undefined
}

/**
 * The known option `name` most likely misspells: the same but for case and underscores, or at most
 * two edits away (a letter dropped, added, changed, or two swapped) for a name of five letters or
 * more; `undefined` when none is that close.
 */
function closestOption(name: string, known: readonly string[]): string | undefined {
  const loose = (text: string): string => text.toLowerCase().replaceAll('_', '')
  return nearestKnownOption(name, known, loose, (given) => (given.length < 5 ? NOT_NEAR : 2))
}

/**
 * The known option `name` is a near miss of, by a rule tuned to short names (spawn options:
 * `cwd`, `env`, `file`, `cols`): `undefined` when none is that close. Names are compared ignoring
 * case, `_` and `-` (`sessionID`, `session_id`, `CWD` are near misses at any length); otherwise, by
 * the length of the known name:
 *
 * - 3 letters or fewer: only two neighbours swapped (`cdw`, `evn`) — a changed or added letter
 *   would catch words that mean something else (`pwd`, `dev`, `venv`);
 * - 4 to 8 letters: one edit, a letter dropped, added, changed, or two swapped (`col`, `argv`,
 *   `fiel`, `sesionId`);
 * - 9 letters or more: two edits (`session` for `sessionId`, `envToDelet`).
 *
 * Why not {@link findMisspeltOption}'s rule: it looks only at given names of five letters or more
 * (it missed `cdw`, `evn`, `col`, `argv`), and allows two edits from any known name, which took
 * words a host may carry for spawn options (`title` for `file`, `color` for `cols`, `comment` for
 * `command`, `scope` for `scopeId`).
 */
export function nearMissOption(name: string, known: readonly string[]): string | undefined {
  const loose = (text: string): string => text.toLowerCase().replaceAll('_', '').replaceAll('-', '')
  const sameLetters = (a: string, b: string): boolean => [...a].sort().join('') === [...b].sort().join('')
  // A short name: a swap only (the same letters, as many).
  return nearestKnownOption(name, known, loose, (given, target) => (target.length <= 3 ? (sameLetters(given, target) ? 1 : NOT_NEAR) : target.length <= 8 ? 1 : 2))
}

/** An allowance no edit distance is within: the known name is not considered. */
const NOT_NEAR = -1

/**
 * The search both rules above share: the known option whose `loose` form equals `name`'s, else the
 * nearest within the edits `allowed` for that pair of loose forms (`given`, `target`; {@link NOT_NEAR}
 * to pass it by); `undefined` when none is.
 */
function nearestKnownOption(name: string, known: readonly string[], loose: (text: string) => string, allowed: (given: string, target: string) => number): string | undefined {
  const given = loose(name)
  const same = known.find((candidate) => loose(candidate) === given)
  if (same !== undefined) return same
  let best: { option: string; distance: number } | undefined
  for (const candidate of known) {
    const target = loose(candidate)
    const limit = allowed(given, target)
    // Cheap first: an edit distance is at least the difference of the lengths.
    if (Math.abs(target.length - given.length) > limit) continue
    const distance = editDistance(given, target)
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { option: candidate, distance }
  }
  return best?.option
}

/** Edits (insertions, deletions, substitutions, swaps of neighbours) from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/** The message refusing `unknown` (with its place, e.g. `flowControl.`), for an error that carries its own message. */
export function unknownOptionMessage(place: string, unknown: UnknownOption): string {
  return `Unknown option \`${place}${unknown.name}\`: ${unknown.hint} (an unknown option would be ignored)`
}

/** What `unknown` is expected to be, for an option error phrased "Expected the `x` option to be …". */
export function unknownOptionExpectation(unknown: UnknownOption): string {
  return `left out: no such option (${unknown.hint})`
}

/**
 * Throw a `TypeError` (`code: 'invalid_option'`, `option`, `value`) naming the first unknown option (with its place, e.g. `flowControl.`) and
 * the option it likely misspells, or else the known ones.
 */
export function assertKnownOptions(place: string, options: object | undefined, known: readonly string[]): void {
  const unknown = findUnknownOption(options, known)
  if (unknown === undefined) return
  const value = (options as Record<string, unknown>)[unknown.name]
  // The message keeps to the name: a factory's option may hold a secret or a large object.
  throw argumentRefusal(unknownOptionMessage(place, unknown), `${place}${unknown.name}`, value)
}

/**
 * The names of every option of `T`, checked at compile time to be complete: call
 * `optionNamesOf<T>()('a', 'b', …)`; leaving one of `T`'s options out is a type error naming it,
 * so an option added to a type cannot be refused as unknown by a list that missed it.
 */
export function optionNamesOf<T>() {
  return <const N extends readonly (keyof T & string)[]>(
    ...names: N & ([Exclude<keyof T, N[number]>] extends [never] ? unknown : { missingOptions: Exclude<keyof T, N[number]> })
  ): readonly (keyof T & string)[] => names
}
