/**
 * `ptykit/testing`: test tools for hosts and provider authors.
 *
 * - {@link createFakePtyProvider}: a deterministic, scriptable `PtyProvider` that needs no OS —
 *   exits with any code, signal or wrapper host, exits before the spawn reply, spawns that fail or
 *   hang, id reuse with a new incarnation, three-valued liveness, write settlements of every kind,
 *   stops that confirm, never confirm or fail, pause/resume, provider sequences; every call recorded.
 * - fast-check arbitraries (`arbitraryTerminalExitCause()`, `arbitraryWireExit()`, …) so a host can
 *   property-test its own code against every exit, settlement and spawn reply a provider may send.
 * - {@link describePtyProviderConformance}: a vitest suite every provider must pass; its checks
 *   ({@link ptyProviderConformanceChecks}) run under any runner, without vitest.
 * - {@link createManualClock}: a `PtyClock` that moves only when the test moves it, for the
 *   controller's stop, flow-control and listing timers.
 *
 * Never loads node-pty. **Requires the optional peer `fast-check`** (for the arbitraries), loaded
 * when this entry point is imported, and **`vitest`** for `describePtyProviderConformance` alone:
 * install both as dev dependencies (`npm i -D "fast-check@^4.0.0" "vitest@>=3.0.0"`). Without
 * fast-check the import throws a `TestingPeerUnavailableError` naming it; without vitest (or from
 * CommonJS, or outside a vitest run) only `describePtyProviderConformance` does. The fake provider and the manual clock use
 * neither: a suite without them (Jest, `node:test`) imports those from `ptykit/testing/fake`.
 *
 * @packageDocumentation
 */
// The fake provider, its scripts, errors and the manual clock: the peer-free `ptykit/testing/fake`.
export * from './fake/index.js'
export {
  ARBITRARY_MAX_EXIT_STATUS,
  ARBITRARY_MAX_SIGNAL,
  arbitraryFakeExit,
  arbitraryProcessExitObservation,
  arbitraryPtyIncarnationId,
  arbitraryPtySpawnResult,
  arbitraryTerminalExitCause,
  arbitraryWireExit,
  arbitraryWriteSettlement,
  type WireExitConstraints,
} from './arbitraries.js'
export { describePtyProviderConformance, ptyProviderConformanceChecks } from './conformance.js'
export { runPtyProviderConformanceCheck } from './conformance-harness.js'
export {
  CONFORMANCE_DEFAULT_TIMEOUT_MS,
  type PtyProviderConformanceCapabilities,
  type PtyProviderConformanceCheck,
  type PtyProviderConformanceEvent,
  type PtyProviderConformanceHarness,
  type PtyProviderConformanceOptions,
} from './conformance-types.js'
