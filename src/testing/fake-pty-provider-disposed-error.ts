import { defineErrorBrand } from '../contracts/error-brand.js'

/**
 * The refusal the fake provider answers every call with once it is disposed (the rule of
 * `PtyProvider.dispose`: a rejection from a method answering with a promise, a throw from any
 * other; `dispose` and the `on*` subscriptions still answer), and a hung spawn (`{ hang: true }`)
 * that `dispose()` overtook (`ptyId` names it) —
 * with the code every real provider uses for it (`provider_disposed`: node-pty, the pty host and
 * SSH), so that a host tested against the fake matches on the code its real provider sends.
 */
export class FakePtyProviderDisposedError extends Error {
  /** The stable code; match on it, never on the message. */
  readonly code = 'provider_disposed' as const
  /** The provider's `name`. */
  readonly providerName: string
  /** The method that was refused (`'spawn'`, `'listProcesses'`, `'write'`…). */
  readonly method: string
  /**
   * The PTY the refused call named: the id of the hung spawn that `dispose()` overtook, or — for a
   * call after `dispose()` — the PTY id it was given (`write('abc', …)` → `'abc'`), as node-pty,
   * the pty host and SSH name it; `undefined` for a `spawn` after `dispose()` and for a call naming
   * no PTY (a listing).
   */
  readonly ptyId: string | undefined

  /**
   * Create the refusal of a call to `method` on the provider `providerName`: made after
   * `dispose()` (naming the PTY `calledPtyId`, when the call named one), or — given
   * `pendingPtyId` — a spawn of that PTY still pending when it was disposed.
   */
  constructor(providerName: string, method: string, pendingPtyId?: string, calledPtyId?: string) {
    super(
      pendingPtyId === undefined
        ? `The fake PTY provider ${JSON.stringify(providerName)} was disposed: cannot call \`${method}\``
        : `The fake PTY provider ${JSON.stringify(providerName)} was disposed while the ${method} of ${JSON.stringify(pendingPtyId)} was pending`,
    )
    this.providerName = providerName
    this.method = method
    this.ptyId = pendingPtyId ?? calledPtyId
    FAKE_PTY_PROVIDER_DISPOSED_ERROR_BRAND.mark(this)
  }
}
const FAKE_PTY_PROVIDER_DISPOSED_ERROR_BRAND = defineErrorBrand(FakePtyProviderDisposedError, 'FakePtyProviderDisposedError')

/** True for a {@link FakePtyProviderDisposedError}, also across duplicate copies of the package. */
export function isFakePtyProviderDisposedError(value: unknown): value is FakePtyProviderDisposedError {
  return FAKE_PTY_PROVIDER_DISPOSED_ERROR_BRAND.is(value)
}
