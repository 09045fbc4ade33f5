import { requireOptionalPeer } from '../contracts/optional-peer.js'
import { FAST_CHECK_PEER, VITEST_NEEDED_BY, type FastCheckModule, type VitestPeer } from './testing-peer-modules.js'
import { TestingPeerUnavailableError } from './testing-peer-unavailable-error.js'

// The CommonJS build's `testing-peers.ts` (tsup.config.ts swaps it in): `require` instead of a
// top-level `await import()`, which CommonJS does not have. Not used by the ESM build or by tsc's
// view of the sources, which see `testing-peers.ts`.

/** fast-check, as the arbitraries use it. */
export const fc: FastCheckModule = requireOptionalPeer<FastCheckModule>({ ...FAST_CHECK_PEER, loader: () => require('fast-check') })

/**
 * vitest is ESM-only (its CommonJS entry throws when required), so `describePtyProviderConformance`
 * cannot register a suite from CommonJS; the checks themselves run there under any runner.
 */
export const vitestPeer: VitestPeer = {
  unavailable: new TestingPeerUnavailableError(
    'vitest',
    'cannot be required from CommonJS (it is ESM-only): call describePtyProviderConformance from a vitest test file, which is ESM',
    VITEST_NEEDED_BY,
    { installHelps: false },
  ),
}
