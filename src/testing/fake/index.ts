/**
 * `ptykit/testing/fake`: the fake provider alone, for any test runner.
 *
 * - {@link createFakePtyProvider}: a deterministic, scriptable `PtyProvider` that needs no OS — its
 *   scripts, test controls (`scriptNextSpawn`, `emitData`, `emitExit`, `settle`, …) and typed
 *   errors (`FakePtyAbsentError`, …);
 * - {@link createManualClock}: a `PtyClock` that moves only when the test moves it, for the
 *   controller's stop, flow-control and listing timers.
 *
 * Needs no optional peer: it loads neither vitest nor fast-check (nor node-pty), so a Jest,
 * `node:test` or Mocha suite imports it — ESM or CommonJS — with only `ptykit` installed.
 * `ptykit/testing` exports all of this too, plus the fast-check arbitraries and the provider
 * conformance suite, which need those peers; without fast-check, importing `ptykit/testing` throws
 * a {@link TestingPeerUnavailableError} (exported here, for a suite that wants to recognize it).
 *
 * @packageDocumentation
 */
// Why a separate entry: `ptykit/testing` loads fast-check and vitest at load time (its
// arbitraries and conformance suite), so importing the fake from there fails wherever fast-check
// is not installed. Nothing reachable from this file may import either
// (check-browser-bundle.mjs and check-packed-consumer.mjs prove it).
export { createFakePtyProvider } from '../fake-pty-provider.js'
export {
  FAKE_DEFAULT_COLS,
  FAKE_DEFAULT_PROCESS_NAME,
  FAKE_DEFAULT_ROWS,
  FAKE_GRACEFUL_STOP_SIGNAL,
  FAKE_IMMEDIATE_STOP_SIGNAL,
} from '../fake-pty-record.js'
export type { FakeDeliveryScheduling } from '../fake-delivery-queue.js'
export type {
  FakeProviderCall,
  FakeProviderMethod,
  FakePtyInspection,
  FakeProcessInfo,
  FakePtyProvider,
  FakePtyProviderOptions,
  FakeWrite,
} from '../fake-pty-provider-types.js'
export {
  FAKE_SCRIPT_METADATA_KEY,
  fakeScriptMetadata,
  type FakeExit,
  type FakeShutdownBehaviour,
  type FakeSpawnScript,
} from '../fake-spawn-script.js'
export { FakePtyAbsentError, isFakePtyAbsentError } from '../fake-pty-absent-error.js'
export { FakePtyIdInUseError, isFakePtyIdInUseError } from '../fake-pty-id-in-use-error.js'
export { FakePtyProviderDisposedError, isFakePtyProviderDisposedError } from '../fake-pty-provider-disposed-error.js'
export { FakePtyProviderDetachedError, isFakePtyProviderDetachedError } from '../fake-pty-provider-detached-error.js'
export {
  FakePtyLiveOtherIncarnationError,
  isFakePtyLiveOtherIncarnationError,
} from '../fake-pty-live-other-incarnation-error.js'
export {
  TESTING_PEERS_INSTALL_COMMAND,
  TESTING_PEER_RANGES,
  TestingPeerUnavailableError,
  isTestingPeerUnavailableError,
  type TestingPeer,
} from '../testing-peer-unavailable-error.js'
export {
  createManualClock,
  type ManualClock,
  type ManualClockOptions,
} from '../manual-clock.js'
