import { loadOptionalPeer } from '../contracts/optional-peer.js'
import { FAST_CHECK_PEER, VITEST_PEER, type FastCheckModule, type VitestPeer, type VitestRegistration } from './testing-peer-modules.js'
import type { TestingPeerUnavailableError } from './testing-peer-unavailable-error.js'

// The optional peers of `ptykit/testing`, loaded once when it is imported (ESM). The CommonJS
// build replaces this file with `testing-peers-cjs.ts` (see tsup.config.ts): no top-level `await`
// there.
//
// Why dynamic imports and not `import fc from 'fast-check'`: a static import of a missing package
// fails while Node links the module graph, before any ptykit code runs, with a bare "Cannot find
// package 'fast-check'". Loaded here, a missing fast-check is a TestingPeerUnavailableError that
// names it, the install command and `ptykit/testing/fake`. vitest is needed only by
// `describePtyProviderConformance`, so a missing vitest fails that call, not the import: the
// arbitraries and the conformance checks run under any runner.

/** fast-check, as the arbitraries use it. */
export const fc: FastCheckModule = await loadOptionalPeer<FastCheckModule>({ ...FAST_CHECK_PEER, loader: () => import('fast-check') })

/** vitest's `describe` and `it`, or the error `describePtyProviderConformance` throws without them. */
export const vitestPeer: VitestPeer = await loadOptionalPeer<VitestRegistration>({ ...VITEST_PEER, loader: () => import('vitest') }).then(
  (vitest) => ({ vitest }),
  (unavailable: TestingPeerUnavailableError) => ({ unavailable }),
)
