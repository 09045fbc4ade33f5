import { isOptionsObject } from '../contracts/known-options.js'
import { assertPtyIdArgument } from '../contracts/provider-arguments.js'
import { assertWriteBytes, assertWriteData } from '../contracts/write-settlement.js'
import { isPtyIncarnationId, PTY_INCARNATION_ID_MAX_LENGTH } from '../contracts/incarnation.js'
import { SshOptionError } from './ssh-option-error.js'

// The SSH provider's checks of its calls' arguments (ids, data, option bags, listeners): each bad
// one is an `SshOptionError` with `code: 'invalid_option'`, naming the argument or option and
// showing the value — the convention every provider's refusal follows (test/cross-provider-refusals.test.ts).
// Why here: until 7 Dec `write(id, 5)`, a `shutdown` given `{ immediate: 'yes' }` or a listener
// that is no function threw a plain `TypeError` without `code` or `option` (or was silently read
// as something else: `shutdown(5)` resolved as for an unknown PTY).

/** Refuse a PTY id that is not a non-empty string (no PTY can have it), naming `ptyId` as every provider does. */
export function assertSshPtyId(id: unknown): asserts id is string {
  asSshRefusal(() => assertPtyIdArgument(id))
}

/** Refuse `write` data that is not a string, as every provider does. */
export function assertSshWriteData(data: unknown): asserts data is string {
  asSshRefusal(() => assertWriteData(data))
}

/** Refuse `writeBytes` bytes that are not a `Uint8Array` (a `Buffer` is one, also from another realm), as every provider does. */
export function assertSshWriteBytes(bytes: unknown): asserts bytes is Uint8Array {
  asSshRefusal(() => assertWriteBytes(bytes))
}

/**
 * Run a check every bundled provider shares (src/contracts/provider-arguments.ts), its refusal
 * thrown as this provider's: an `invalid_option` {@link SshOptionError}, the same option, value
 * and message.
 */
export function asSshRefusal(check: () => void): void {
  try {
    check()
  } catch (error) {
    const refusal = error as { message: string; option?: string; value?: unknown }
    const ours = new SshOptionError(refusal.option ?? 'options', 'well formed', refusal.value, false, undefined, 'invalid_option')
    ours.message = refusal.message
    throw ours
  }
}

/** Refuse a listener that is not a function. */
export function assertSshListener(listener: unknown): void {
  if (typeof listener !== 'function') throw new SshOptionError('listener', 'a function', listener, false, undefined, 'invalid_option', 'argument')
}

/**
 * Refuse a malformed option bag of `shutdown` or `listProcesses`: not an object
 * (`options`), or one of `kinds`' keys of the wrong type. The wait budget's ranges and misspelt
 * names are checked after, by the shared `resolveWaitDeadline`.
 */
export function assertSshCallOptions(options: unknown, kinds: Readonly<Record<string, 'boolean' | 'finite number' | 'incarnation id'>>): void {
  if (options === undefined) return
  if (!isOptionsObject(options)) throw new SshOptionError('options', 'an object', options, false, undefined, 'invalid_option')
  const record = options as Record<string, unknown>
  for (const [key, kind] of Object.entries(kinds)) {
    const value = record[key]
    if (value === undefined) continue
    const fits = kind === 'boolean' ? typeof value === 'boolean' : kind === 'finite number' ? typeof value === 'number' && Number.isFinite(value) : isPtyIncarnationId(value)
    const expected = kind === 'incarnation id' ? `an incarnation id (a string of 1 to ${PTY_INCARNATION_ID_MAX_LENGTH} characters)` : `a ${kind}`
    if (!fits) throw new SshOptionError(key, expected, value, false, undefined, 'invalid_option')
  }
}

/**
 * The options `shutdown` reads, by type. Not the wait budget (`deadlineMs`, `timeoutMs`): the shared
 * `resolveWaitDeadline` refuses a bad one in the words and the shape every provider's refusal has.
 */
export const SSH_SHUTDOWN_OPTION_KINDS = { immediate: 'boolean', keepHistory: 'boolean', expectedIncarnationId: 'incarnation id' } as const

/** The options `listProcesses` reads, by type: none but the wait budget, which the shared `resolveWaitDeadline` checks. */
export const SSH_LISTING_OPTION_KINDS = {} as const
