import { assertPtyIdArgument } from '../contracts/provider-arguments.js'
import { assertWriteBytes, assertWriteData } from '../contracts/write-settlement.js'
import { SshOptionError } from './ssh-option-error.js'

// The SSH provider's checks of its calls' arguments (ids, data, listeners; option bags are the shared checks'): each bad
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

