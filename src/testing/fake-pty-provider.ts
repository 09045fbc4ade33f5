import type { PtyProvider } from '../contracts/index.js'
import { assertOptionsBag, optionNamesOf } from '../contracts/known-options.js'
import type { FakeDeliveryScheduling } from './fake-delivery-queue.js'
import type { FakePtyProvider, FakePtyProviderOptions, FakeProviderCall, FakeProviderMethod } from './fake-pty-provider-types.js'
import { createFakeProviderMethods } from './fake-provider-methods.js'
import { FakePtyProviderDisposedError } from './fake-pty-provider-disposed-error.js'
import { refuseCallsAfterDispose } from '../contracts/disposed-provider.js'
import { createFakeProviderState } from './fake-provider-state.js'
import { createFakeTestControls } from './fake-test-controls.js'

/** The options of the factory below: any other name is refused, not ignored. */
const FAKE_PROVIDER_OPTION_NAMES = optionNamesOf<FakePtyProviderOptions>()(
  'name',
  'authoritativeListings',
  'hostReportsChildExitStatus',
  'idPrefix',
  'hostId',
  'now',
  'defaultScript',
  'scheduling',
  'foregroundProcessEvidence',
)

// The fake provider, composed: one state object (`fake-provider-state.ts`) shared by its spawning
// (`fake-spawning.ts`), its `PtyProvider` methods (`fake-provider-methods.ts`) and its test controls
// (`fake-test-controls.ts`); per-PTY records in `fake-pty-record.ts`, ordered events in
// `fake-pty-events.ts`, scripted deliveries in `fake-delivery-queue.ts`, scripts in
// `fake-spawn-script.ts`, the public types in `fake-pty-provider-types.ts`.

/**
 * Create a deterministic fake {@link PtyProvider}: no OS, no real timers, no wall clock — except
 * that `shutdown` and `listProcesses` refuse a `deadlineMs` long before `Date.now()` (a duration
 * given in its place), as every provider does.
 *
 * Script spawns with `scriptNextSpawn`, `metadata.fakeScript` or `defaultScript`; drive live PTYs
 * with `emitData`/`emitExit`; assert on `calls`, `getPty(id)` and the events. Scripted output and
 * exits after the reply are delivered on a later turn (see {@link FakeDeliveryScheduling}); `await
 * provider.settle()` delivers them deterministically.
 *
 * @throws TypeError naming the option when `options` is not an object, holds an option the fake
 * does not know (with the one it likely misspells), or one is malformed (a `defaultScript` field
 * of the wrong type included).
 *
 * @example
 * ```ts
 * const provider = createFakePtyProvider()
 * provider.scriptNextSpawn({ output: ['hello\r\n'], exit: { exitCode: 0, signal: 15 } })
 * const { id } = await provider.spawn({ cols: 80, rows: 24 })
 * await provider.settle() // data 'hello\r\n', then exit { code: 0, cause: signaled(15) }
 * ```
 */
export function createFakePtyProvider(options: FakePtyProviderOptions = {}): FakePtyProvider {
  assertOptionsBag('fake provider', options, FAKE_PROVIDER_OPTION_NAMES)
  const state = createFakeProviderState(options)
  const provider: FakePtyProvider = {
    name: state.name,
    authoritativeListings: state.authoritativeListings,
    get calls(): readonly FakeProviderCall[] {
      return state.calls
    },
    // The rule of `PtyProvider.dispose`: every call but `dispose` and the `on*` subscriptions is
    // refused `provider_disposed` afterwards (recorded all the same), as every bundled provider does.
    ...refuseCallsAfterDispose(
      createFakeProviderMethods(state),
      () => state.disposed,
      (method, ptyId, args) => {
        state.record(method as FakeProviderMethod, args)
        return new FakePtyProviderDisposedError(state.name, method, undefined, ptyId)
      },
    ),
    [Symbol.asyncDispose](): Promise<void> {
      return provider.dispose()
    },
    ...createFakeTestControls(state),
  }
  return provider
}
