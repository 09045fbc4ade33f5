import { defineErrorBrand } from '../contracts/error-brand.js'

// What `ptykit/testing` says when an optional peer it needs is missing. Reachable from
// `ptykit/testing/fake` (which exports the class), so it imports neither peer.

/**
 * The optional peers of `ptykit/testing`, with the version ranges `peerDependencies` gives them
 * (test/testing/testing-peers.test.ts keeps the two in step).
 */
export const TESTING_PEER_RANGES = {
  /** For the fast-check arbitraries (`arbitraryTerminalExitCause()`, …): loaded when `ptykit/testing` is imported. */
  'fast-check': '^4.0.0',
  /** For `describePtyProviderConformance`, which registers a vitest suite; the checks themselves need no vitest. */
  vitest: '>=3.0.0',
} as const

/** An optional peer of `ptykit/testing`: `fast-check` (the arbitraries) or `vitest` (`describePtyProviderConformance`). */
export type TestingPeer = keyof typeof TESTING_PEER_RANGES

/**
 * The command that installs both peers, each at its `peerDependencies` range, quoted for any shell
 * (`>=` unquoted would be a redirection).
 */
export const TESTING_PEERS_INSTALL_COMMAND = `npm i -D ${Object.entries(TESTING_PEER_RANGES)
  .map(([name, range]) => `"${name}@${range}"`)
  .join(' ')}`

/**
 * A part of `ptykit/testing` needs an optional peer that cannot be loaded: importing
 * `ptykit/testing` without `fast-check`, or calling `describePtyProviderConformance` without
 * `vitest` (or from CommonJS, where vitest cannot be required, or outside a vitest run). The message names the peer, the
 * install command, and `ptykit/testing/fake` — the fake provider and the manual clock, which need
 * neither peer.
 *
 * @example
 * ```ts
 * // A Jest suite without fast-check: `require('ptykit/testing')` throws
 * // TestingPeerUnavailableError: ptykit/testing needs the optional peer dependency `fast-check`, which is not installed. …
 * const { createFakePtyProvider } = require('ptykit/testing/fake') // needs no peer
 * ```
 */
export class TestingPeerUnavailableError extends Error {
  /** The stable code; match on it, never on the message. */
  readonly code = 'testing_peer_unavailable' as const
  /** The peer that is missing or unusable. */
  readonly peer: TestingPeer

  /**
   * @param peer - The peer that cannot be used.
   * @param why - Why, completing "which …": `is not installed`, `could not be loaded (…)`.
   * @param needs - What needs it, leading the message: `ptykit/testing`, `describePtyProviderConformance()`.
   * @param options - `cause`: the import's own failure; `installHelps: false` leaves the install
   * command out, where installing would not help (vitest required from CommonJS).
   */
  constructor(peer: TestingPeer, why: string, needs: string, options: { cause?: unknown; installHelps?: boolean } = {}) {
    super(
      `${needs} needs the optional peer dependency \`${peer}\`, which ${why}. ` +
        (options.installHelps === false ? '' : `Install the test peers of ptykit/testing with \`${TESTING_PEERS_INSTALL_COMMAND}\`. `) +
        (peer === 'vitest'
          ? 'Under another runner (node:test, Jest, Mocha), run the checks one by one with ptyProviderConformanceChecks(options) and runPtyProviderConformanceCheck(check, makeProvider, options), which need no vitest. '
          : '') +
        'For the fake provider and the manual clock alone, import `ptykit/testing/fake`: it needs neither peer.',
      'cause' in options ? { cause: options.cause } : undefined,
    )
    this.peer = peer
    TESTING_PEER_UNAVAILABLE_ERROR_BRAND.mark(this)
  }
}
const TESTING_PEER_UNAVAILABLE_ERROR_BRAND = defineErrorBrand(TestingPeerUnavailableError, 'TestingPeerUnavailableError')

/** True for a {@link TestingPeerUnavailableError}, also across duplicate copies of the package. */
export function isTestingPeerUnavailableError(value: unknown): value is TestingPeerUnavailableError {
  return TESTING_PEER_UNAVAILABLE_ERROR_BRAND.is(value)
}
