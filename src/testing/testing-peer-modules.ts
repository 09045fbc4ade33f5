import type * as FastCheck from 'fast-check'
import type * as Vitest from 'vitest'
import type { OptionalPeerLoad } from '../contracts/optional-peer.js'
import { TestingPeerUnavailableError } from './testing-peer-unavailable-error.js'

// What `testing-peers.ts` (ESM) and `testing-peers-cjs.ts` (the CommonJS build's stand-in for it)
// share: the shapes of the two peers and how each is recognized and refused.

/** fast-check's module object, as the arbitraries use it. */
export type FastCheckModule = typeof FastCheck

/** What `describePtyProviderConformance` uses of vitest. */
export type VitestRegistration = Pick<typeof Vitest, 'describe' | 'it'>

/** vitest, or why it cannot be used (thrown when `describePtyProviderConformance` is called). */
export type VitestPeer = { readonly vitest: VitestRegistration } | { readonly unavailable: TestingPeerUnavailableError }

/** How to recognize and refuse fast-check (all of an {@link OptionalPeerLoad} but the loader). */
export const FAST_CHECK_PEER: Omit<OptionalPeerLoad, 'loader'> = {
  isModule: (candidate) => typeof (candidate as { integer?: unknown }).integer === 'function' && typeof (candidate as { oneof?: unknown }).oneof === 'function',
  lacks: 'has no `integer` and `oneof` functions',
  unavailable: (cause, why) => new TestingPeerUnavailableError('fast-check', why, 'ptykit/testing', { cause }),
}

/** What needs vitest, for its message. */
export const VITEST_NEEDED_BY = 'describePtyProviderConformance()'

/** How to recognize and refuse vitest (all of an {@link OptionalPeerLoad} but the loader). */
export const VITEST_PEER: Omit<OptionalPeerLoad, 'loader'> = {
  isModule: (candidate) => typeof (candidate as { describe?: unknown }).describe === 'function' && typeof (candidate as { it?: unknown }).it === 'function',
  lacks: 'has no `describe` and `it` functions',
  unavailable: (cause, why) => new TestingPeerUnavailableError('vitest', why, VITEST_NEEDED_BY, { cause }),
}
