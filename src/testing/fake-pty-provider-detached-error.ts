import { defineErrorBrand } from '../contracts/error-brand.js'

/**
 * The refusal the fake provider answers with once its `detach()` was called — as the pty host
 * provider refuses after its own `detach()` (docs/pty-host.md, "After `detach()`"): a `spawn`, a
 * `shutdown` of a PTY whose exit it did not see, a `listProcesses` — an answer there would be a
 * guess (an empty listing would prove every PTY gone, a resolved stop would say one was stopped).
 * Its `code` is the pty host's, `provider_detached`, so that a host tested against the fake
 * matches on the code its real provider sends (a controller reads it as its provider let go of
 * its PTYs, which run on).
 */
export class FakePtyProviderDetachedError extends Error {
  /** The stable code; match on it, never on the message. */
  readonly code = 'provider_detached' as const
  /** The provider's `name`. */
  readonly providerName: string
  /** The method that was refused (`'spawn'`, `'shutdown'`, `'listProcesses'`). */
  readonly method: string
  /** The PTY the refused call named (`shutdown('abc')` → `'abc'`); `undefined` for a spawn or a listing. */
  readonly ptyId: string | undefined

  /** Create the refusal of a call to `method` (about the PTY `ptyId`, when it named one) on the detached provider `providerName`. */
  constructor(providerName: string, method: string, ptyId?: string) {
    super(`Cannot call \`${method}\`: the fake PTY provider ${JSON.stringify(providerName)} was detached (its PTYs run on where it no longer sees them)`)
    this.providerName = providerName
    this.method = method
    this.ptyId = ptyId
    FAKE_PTY_PROVIDER_DETACHED_ERROR_BRAND.mark(this)
  }
}
const FAKE_PTY_PROVIDER_DETACHED_ERROR_BRAND = defineErrorBrand(FakePtyProviderDetachedError, 'FakePtyProviderDetachedError')

/** True for a {@link FakePtyProviderDetachedError}, also across duplicate copies of the package. */
export function isFakePtyProviderDetachedError(value: unknown): value is FakePtyProviderDetachedError {
  return FAKE_PTY_PROVIDER_DETACHED_ERROR_BRAND.is(value)
}
