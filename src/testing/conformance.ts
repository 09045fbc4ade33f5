import { describeThrownValue, describeValue } from '../contracts/describe-value.js'
import type { PtyProvider } from '../contracts/index.js'
import { bytesConformanceChecks } from './conformance-bytes-checks.js'
import { disposeConformanceChecks } from './conformance-dispose-checks.js'
import { detachConformanceChecks } from './conformance-detach-checks.js'
import { eventAndExitConformanceChecks } from './conformance-event-checks.js'
import { runPtyProviderConformanceCheck } from './conformance-harness.js'
import { flowControlConformanceChecks } from './conformance-flow-checks.js'
import { heldWriteConformanceChecks } from './conformance-held-write-checks.js'
import { inventoryConformanceChecks } from './conformance-inventory-checks.js'
import { seedRuleConformanceChecks } from './conformance-seed-checks.js'
import { spawnOptionConformanceChecks } from './conformance-spawn-option-checks.js'
import {
  CONFORMANCE_DEFAULT_TIMEOUT_MS,
  assertConformanceOptions,
  type PtyProviderConformanceCheck,
  type PtyProviderConformanceOptions,
} from './conformance-types.js'
import { VITEST_NEEDED_BY } from './testing-peer-modules.js'
import { TestingPeerUnavailableError } from './testing-peer-unavailable-error.js'
import { vitestPeer } from './testing-peers.js'

// The provider conformance suite: the list of checks (in `conformance-event-checks.ts`,
// `conformance-inventory-checks.ts`, `conformance-seed-checks.ts`, `conformance-bytes-checks.ts`,
// `conformance-held-write-checks.ts`, `conformance-flow-checks.ts`, `conformance-dispose-checks.ts` and `conformance-spawn-option-checks.ts`) and its vitest registration;
// the harness that runs one check is `conformance-harness.ts`, the types `conformance-types.ts`.

/**
 * A conformance test's own vitest timeout, in multiples of `timeoutMs`: the slowest check waits for
 * up to four exits in a row, plus set-up and clean-up.
 */
export const CONFORMANCE_TEST_TIMEOUT_FACTOR = 6

/**
 * The checks every {@link PtyProvider} must pass, given how to drive it:
 *
 * - spawn → data → exit ordering: all of a PTY's data before its exit, exactly one exit (nothing
 *   follows it, also a moment later);
 * - the exit and every data event carry the spawned incarnation, when the spawn attested one;
 * - exit codes arrive as spawned (130 too: a code, not a signal), and a cause, when sent, is valid
 *   and agrees with the code;
 * - with `spawnSignaled`, a death by a signal reads (cause, else bare code) as that signal or
 *   `unknown`, never as an exit code; with `killFromOutside`, a process SIGKILLed from outside right
 *   before a graceful stop keeps its cause and says `diedBeforeStopRequest`;
 * - a stop (graceful and immediate) leads to an exit;
 * - writes after exit (and to unknown ids) are refused or unverifiable, never accepted;
 * - `hasPty` and `probeLiveness` never answer `false` for a live PTY; a probe naming an
 *   incarnation never answers `true` about another one (a made-up one, or the ended one whose id
 *   a respawn took);
 * - listings contain every live PTY (and, when authoritative, no exited one), every row readable
 *   (a string `id`, a string `incarnationId` or none); an authoritative listing keeps a PTY until
 *   its exit is reported; after a respawn under the same id, its row names the new incarnation;
 * - every method's promise settles (within `timeoutMs`), `write` never rejects, and `onData` /
 *   `onExit` return an unsubscribe function that removes only its own listener;
 * - a resize is reflected in the size read back, where the provider can read it; a size that is
 *   not an integer from 1 to `MAX_PTY_DIMENSION` is refused by throwing an error with
 *   `code: 'invalid_option'`, `option` and `value` (never answered `true` or `false`), the PTY left
 *   at its size;
 * - foreground evidence (`confirmForeground`, when present) is plain, well-formed, or `null`, and
 *   `null` for unknown and exited PTYs; `resetInputModes` (when present) neither fails nor stops;
 * - `dispose` leaves nothing running;
 * - events are plain serializable data, and an unsubscribed listener hears nothing;
 * - the seed's provider-side rules: listings read `deadlineMs` as an absolute time (a past one
 *   answers at once), writes settle with a well-formed `WriteSettlement`, an attach to another live
 *   incarnation is refused with `pty_live_other_incarnation`, every exit names its incarnation, a
 *   stop of an id it never held resolves (already gone) and stops nothing else;
 * - writes of raw bytes (`writeBytes`, where the provider has it or the `writeBytes` capability says
 *   so): settled as honestly as text (never accepted after exit, refused at once after one it
 *   reported), and anything but a `Uint8Array` refused with a `TypeError`;
 * - with `stopReadingInput`, a write (of text, or of bytes with `writeBytes`) whose bytes the provider held for a program that reads
 *   nothing settles, when the PTY ends first (an immediate stop, a SIGKILL from outside,
 *   `dispose`), `refused('pty_exited')` or `unverifiable('partial_write', true)`: never
 *   `accepted`, never a rejection, never left pending; and when a stop given no time
 *   (`timeoutMs: 0`) ends the PTY or gives up, the same — or, with the `stopClosesTransportFirst`
 *   capability (a stop that closes its transport before the end is proven, as SSH's does),
 *   `refused('provider_refused_write')` or `unverifiable('transport_lost', true)`;
 * - with `pauseProducer` and `resumeProducer`: a PTY that ends while its producer is paused
 *   delivers all its output, then its single exit, once resumed (its output acknowledged with
 *   `acknowledgeData` where the provider has it) — nothing lost, no hang;
 * - once disposed, every call but `dispose` (which resolves again) and the `on*` subscriptions is
 *   refused with `code: 'provider_disposed'`, naming the method — a method answering with a
 *   promise rejects, any other throws (capability `refusesCallsAfterDispose`, default `true`);
 * - with the `detach` capability (opt in: a provider with the pty host provider's `detach()`),
 *   once detached: a spawn, a listing and a stop refused `provider_detached` naming the method and
 *   the PTY (a stop of a PTY whose exit it reported resolves), `null` about a PTY that runs on,
 *   `false` about one it saw end, writes refused, resizes `false`;
 * - with the `refusesMisspeltSpawnOptions` capability (opt in), a spawn option that likely
 *   misspells one (`cdw`, `sessionID`, `evn`…) refused `invalid_spawn_option` naming it and the
 *   option meant (a misspelt `env`'s value neither shown nor kept), nothing started.
 *
 * Use {@link describePtyProviderConformance} to register them with vitest; the list is exported so
 * other runners (or a test of a deliberately broken provider) can run them one by one. The checks
 * do not use vitest: they assert on their own (a failure is an `Error` named `AssertionError`,
 * with `actual` and `expected`), so a `node:test`, Jest or Mocha suite — ESM or CommonJS, without
 * vitest installed — runs each with `runPtyProviderConformanceCheck`:
 *
 * ```js
 * const { test } = require('node:test')
 * const { ptyProviderConformanceChecks, runPtyProviderConformanceCheck } = require('ptykit/testing')
 * for (const check of ptyProviderConformanceChecks(options)) {
 *   test(check.name, () => runPtyProviderConformanceCheck(check, () => createMyProvider(), options))
 * }
 * ```
 *
 * @throws TypeError when `options` is not an object, lacks one of the three spawn functions, or
 * holds an option it does not know (naming it: a misspelt `capabilites` would run checks the
 * provider said it cannot pass).
 */
export function ptyProviderConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  assertConformanceOptions(options)
  return [
    ...eventAndExitConformanceChecks(options),
    ...inventoryConformanceChecks(options),
    ...seedRuleConformanceChecks(options),
    ...bytesConformanceChecks(options),
    ...heldWriteConformanceChecks(options),
    ...flowControlConformanceChecks(options),
    ...disposeConformanceChecks(options),
    ...detachConformanceChecks(options),
    ...spawnOptionConformanceChecks(options),
  ]
}

/**
 * Register a vitest suite that checks what every {@link PtyProvider} must honour — the checks of
 * {@link ptyProviderConformanceChecks}, one `it` each.
 *
 * Every check creates its own provider with `makeProvider`, waits on events with a timeout (never
 * on microtask counts, so real processes work), and stops what it started afterwards.
 *
 * @param name - The suite's name (usually the provider's).
 * @param makeProvider - A fresh provider per check.
 * @param options - How to start echo, long-running and exiting processes, and what the provider cannot do.
 * @throws TypeError for `options` that {@link ptyProviderConformanceChecks} refuses, or a
 * `timeoutMs` that is not a positive number.
 * @throws TestingPeerUnavailableError (`peer: 'vitest'`) where vitest is not installed, when
 * called from CommonJS (vitest is ESM-only), or outside a vitest run (vitest cannot register a suite). The checks need no vitest: under another runner, use
 * {@link ptyProviderConformanceChecks} and `runPtyProviderConformanceCheck`.
 *
 * @example
 * ```ts
 * describePtyProviderConformance('fake', () => createFakePtyProvider(), {
 *   spawnEcho: (text) => ({ metadata: fakeScriptMetadata({ output: [text], exit: { exitCode: 0 } }) }),
 *   spawnLongRunning: () => ({}),
 *   spawnExit: (code) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: code } }) }),
 * })
 * ```
 */
export function describePtyProviderConformance(
  name: string,
  makeProvider: () => PtyProvider | Promise<PtyProvider>,
  options: PtyProviderConformanceOptions,
): void {
  assertConformanceOptions(options)
  const timeoutMs = options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`Expected the \`timeoutMs\` option to be a positive number, got ${describeValue(timeoutMs)}`)
  }
  const checks = ptyProviderConformanceChecks(options)
  if ('unavailable' in vitestPeer) throw vitestPeer.unavailable
  const { describe, it } = vitestPeer.vitest
  let registering = false
  try {
    describe(`PtyProvider conformance: ${name}`, () => {
      registering = true
      for (const check of checks) {
        // Why the explicit test timeout: each check may wait up to `timeoutMs` several times.
        it(check.name, () => runPtyProviderConformanceCheck(check, makeProvider, options), timeoutMs * CONFORMANCE_TEST_TIMEOUT_FACTOR)
      }
    })
  } catch (error) {
    if (registering) throw error
    // vitest is installed, but no vitest run is under way (a `node:test` or Jest suite in a project
    // that has vitest too): its `describe` throws an internal error ("Cannot read properties of
    // undefined (reading 'config')"), which says nothing about what to do.
    throw new TestingPeerUnavailableError(
      'vitest',
      `is installed but could not register a suite (${describeThrownValue(error)}): call describePtyProviderConformance from a test file that vitest runs`,
      VITEST_NEEDED_BY,
      { cause: error, installHelps: false },
    )
  }
}
