import { expect } from './conformance-expect.js'
import { isWriteSettlement, type PtyProvider, type PtySpawnResult, type WriteSettlement } from '../contracts/index.js'
import { CONFORMANCE_POLL_INTERVAL_MS, ProviderCallHungError } from './conformance-harness.js'
import { CONFORMANCE_DEFAULT_TIMEOUT_MS, type PtyProviderConformanceCheck, type PtyProviderConformanceHarness, type PtyProviderConformanceOptions } from './conformance-types.js'

// The conformance check of writes a provider holds for a program that does not read (its
// terminal's input buffer is full): what they settle when the PTY ends first.

/**
 * One write of the check: 256 KiB of lines. Lines, because a terminal in its default (cooked) mode
 * takes — and drops — the rest of a line longer than its buffer from a program that does not read;
 * whole lines fill the buffer, and then the writer must wait.
 */
const HELD_WRITE_CHUNK = `${'ptykit-conformance-held-input '.padEnd(1_023, 'x')}\n`.repeat(256)

/**
 * At most this many writes (16 MiB) before the check stops looking for one the provider holds: past
 * a terminal's input buffer (some 64 KiB) and an SSH channel's window (2 MiB) many times over.
 */
const HELD_WRITE_MAX_WRITES = 64

/**
 * How many writes must answer a promise before the check stops writing: the first may have sent
 * part of its bytes, the second is held whole behind it.
 */
const HELD_WRITE_PROMISED_WRITES = 2

/**
 * How long no write may settle before the writes still pending count as held (the program reads
 * nothing), not on their way (a round trip to a remote host). The wait ends a quarter of
 * `timeoutMs` after the first write at the latest: the harness fails a write still pending
 * `timeoutMs` after it was made, and the PTY must have ended, and the write settled, before that.
 */
const HELD_WRITE_QUIET_MS = 100

/** How a write of the check ended: its settlement, or what it rejected with. */
type WriteOutcome = { settlement: unknown } | { rejected: unknown }

/** One write of the check and its outcome, once known. */
type TrackedWrite = {
  /** Its place in the burst (0 is the first). */
  readonly index: number
  /** Written by `writeBytes` (else by `write`). */
  readonly asBytes: boolean
  /** Its outcome; `undefined` while it is pending. */
  outcome: WriteOutcome | undefined
  /** Resolves once the outcome is known (the harness bounds every provider call by `timeoutMs`). */
  readonly known: Promise<void>
}

/**
 * A way the check ends a PTY whose program reads nothing: `end` starts it, and its promise is
 * awaited once the exit was reported (a stop may resolve only then).
 */
type Ending = { readonly how: string; end(h: PtyProviderConformanceHarness, result: PtySpawnResult): Promise<void> }

/**
 * The check of held writes (see `ptyProviderConformanceChecks`), registered with the
 * `stopReadingInput` driver: a write (of text, and of bytes where the provider has `writeBytes`
 * and the `writeBytes` capability is not `false`) whose bytes the provider held for a program
 * that reads nothing settles, once the PTY ended — an immediate stop, a SIGKILL from outside (with
 * `killFromOutside`), the provider's `dispose` (where it reports exits) — `refused('pty_exited')`
 * or `unverifiable('partial_write', true)`: never `accepted`, never a rejection, never left pending.
 * And the check of the same writes at a stop given no time (see `heldWritesAtStopGivenNoTime`),
 * with the `stopClosesTransportFirst` capability's allowance.
 *
 * @param options - how to drive the provider (as for the whole suite).
 */
export function heldWriteConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  const { stopReadingInput, killFromOutside } = options
  if (stopReadingInput === undefined) return []
  // Not a graceful stop: a stopped program (SIGSTOP) may wait for the stop's escalation to a KILL,
  // longer than a held write may stay pending in the harness — the check is of writes, not stops.
  const endings: Ending[] = [{ how: 'an immediate stop', end: (h, result) => h.provider.shutdown(result.id, { immediate: true }) }]
  if (killFromOutside !== undefined && options.capabilities?.signals !== false) {
    endings.push({ how: 'a SIGKILL from outside', end: async (h, result) => killFromOutside(result, h.provider) })
  }
  // Last: the provider is gone after it. Only where dispose reports the exits it causes.
  const disposeEnding: Ending = {
    how: 'dispose',
    end: async (h) => {
      await h.provider.dispose?.()
    },
  }
  if (options.capabilities?.exitsOnDispose !== false) endings.push(disposeEnding)
  return [
    {
      name: `settles a write whose bytes it held for a program that reads nothing when the PTY ends first (${endings.map((ending) => ending.how).join(', ')}): refused('pty_exited') or unverifiable('partial_write', true), never accepted, never left pending`,
      async run(h) {
        for (const { how, end } of endings) {
          // A provider without dispose has no such ending.
          if (how === disposeEnding.how && h.provider.dispose === undefined) continue
          const { result, held } = await spawnWithHeldWrites(h, options, stopReadingInput)
          // Nothing held (the provider took all of it at once, or refused it): nothing to settle.
          if (held.length === 0) continue
          const ending = end(h, result)
          // Settled even when it rejects first: a failed stop fails the check as a missing exit.
          ending.catch(() => undefined)
          await h.waitForExit(result.id)
          await ending
          for (const write of held) {
            await write.known
            const what = `write #${write.index + 1} (${HELD_WRITE_CHUNK.length} bytes${write.asBytes ? ', by writeBytes' : ''}), held for a program that reads nothing when the PTY ended by ${how},`
            const outcome = write.outcome as WriteOutcome
            if ('rejected' in outcome) {
              throw new Error(`The ${what} did not settle with a WriteSettlement (${String(outcome.rejected)}): once the PTY ended, settle it refused('pty_exited') or unverifiable('partial_write', true) — never leave it pending, never reject`)
            }
            const settled = outcome.settlement
            expect(isWriteSettlement(settled), `the ${what} answered ${JSON.stringify(settled)}, not a WriteSettlement`).toBe(true)
            expect(
              isDroppedAtExit(settled as WriteSettlement),
              `the ${what} settled ${JSON.stringify(settled)}: bytes dropped at the PTY's end settle refused('pty_exited') when none of them had gone on, unverifiable('partial_write', true) when some had — never accepted`,
            ).toBe(true)
          }
        }
      },
    },
    heldWritesAtStopGivenNoTime(options, stopReadingInput),
  ]
}

/**
 * The check of held writes at a stop given no time (`timeoutMs: 0`: the stop's escalation
 * compressed to its last step at once): whether the stop ends the PTY (its exit drops what was
 * held) or gives up first — closing its transport before the end is proven, as the SSH provider's
 * stop does at its last step — every held write settles, never `accepted`, never a rejection,
 * never left pending: `refused('pty_exited')` / `unverifiable('partial_write', true)`, or, where
 * the provider says its stop may close the transport first (`stopClosesTransportFirst`),
 * `refused('provider_refused_write')` / `unverifiable('transport_lost', true)` too. The stop
 * itself may reject (not hang): it had no time.
 */
function heldWritesAtStopGivenNoTime(
  options: PtyProviderConformanceOptions,
  stopReadingInput: NonNullable<PtyProviderConformanceOptions['stopReadingInput']>,
): PtyProviderConformanceCheck {
  const closesFirst = options.capabilities?.stopClosesTransportFirst === true
  const expected = closesFirst
    ? "refused('pty_exited') or unverifiable('partial_write', true) — or, its stop closing the transport before the end is proven, refused('provider_refused_write') or unverifiable('transport_lost', true)"
    : "refused('pty_exited') or unverifiable('partial_write', true)"
  return {
    name: `settles a write whose bytes it held for a program that reads nothing when a stop given no time (timeoutMs: 0) ends the PTY or gives up: ${expected}; never accepted, never left pending`,
    async run(h) {
      const { result, held } = await spawnWithHeldWrites(h, options, stopReadingInput)
      // Nothing held (the provider took all of it at once, or refused it): nothing to settle.
      if (held.length === 0) return
      const stopped = await h.provider.shutdown(result.id, { timeoutMs: 0 }).then(
        () => null,
        (error: unknown) => error,
      )
      // A stop with no time may fail; it must not hang (every provider method settles).
      if (stopped instanceof ProviderCallHungError) throw stopped
      for (const write of held) {
        await write.known
        const what = `write #${write.index + 1} (${HELD_WRITE_CHUNK.length} bytes${write.asBytes ? ', by writeBytes' : ''}), held for a program that reads nothing when a stop given no time ${stopped === null ? 'resolved' : 'rejected'},`
        const outcome = write.outcome as WriteOutcome
        if ('rejected' in outcome) {
          throw new Error(`The ${what} did not settle with a WriteSettlement (${String(outcome.rejected)}): settle it ${expected} — never leave it pending, never reject`)
        }
        const settled = outcome.settlement
        expect(isWriteSettlement(settled), `the ${what} answered ${JSON.stringify(settled)}, not a WriteSettlement`).toBe(true)
        const allowed = isDroppedAtExit(settled as WriteSettlement) || (closesFirst && isDroppedWithTransport(settled as WriteSettlement))
        expect(allowed, `the ${what} settled ${JSON.stringify(settled)}: it must settle ${expected}`).toBe(true)
      }
    },
  }
}

/** Whether `settlement` is what a write whose held bytes a transport closed before the PTY's end was proven settles. */
function isDroppedWithTransport(settlement: WriteSettlement): boolean {
  if (settlement.kind === 'refused') return settlement.reason === 'provider_refused_write'
  return settlement.kind === 'unverifiable' && settlement.reason === 'transport_lost' && settlement.bytesHandedToTransport
}

/** {@link HELD_WRITE_CHUNK} as the bytes a `writeBytes` of it hands over (all ASCII: one byte a character). */
const HELD_WRITE_CHUNK_BYTES = new TextEncoder().encode(HELD_WRITE_CHUNK)

/**
 * Write {@link HELD_WRITE_CHUNK} to `id` (every other time as bytes, with `bytes` and a provider
 * that has `writeBytes`) until {@link HELD_WRITE_PROMISED_WRITES} writes answered
 * a promise, a write answered anything but `accepted` at once, or {@link HELD_WRITE_MAX_WRITES}
 * were written; each write tracked until its outcome is known.
 */
/**
 * Spawn a long-running PTY, make its program stop reading input, write to it until the provider
 * holds writes, and wait until they are quiet: the PTY and the writes still unsettled (held).
 */
async function spawnWithHeldWrites(
  h: PtyProviderConformanceHarness,
  options: PtyProviderConformanceOptions,
  stopReadingInput: NonNullable<PtyProviderConformanceOptions['stopReadingInput']>,
): Promise<{ result: PtySpawnResult; held: TrackedWrite[] }> {
  const timeoutMs = options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS
  const result = await h.spawn(options.spawnLongRunning())
  await stopReadingInput(result, h.provider)
  const firstWriteAt = performance.now()
  const writes = writeUntilHeld(h, result.id, options.capabilities?.writeBytes !== false)
  await untilQuiet(h, options, writes, firstWriteAt + timeoutMs / 4)
  return { result, held: writes.filter((write) => write.outcome === undefined) }
}

function writeUntilHeld(h: PtyProviderConformanceHarness, id: string, bytes: boolean): TrackedWrite[] {
  const provider: PtyProvider = h.provider
  const writeBytes = bytes && typeof provider.writeBytes === 'function' ? provider.writeBytes.bind(provider) : undefined
  const writes: TrackedWrite[] = []
  let promised = 0
  for (let index = 0; index < HELD_WRITE_MAX_WRITES && promised < HELD_WRITE_PROMISED_WRITES; index += 1) {
    let answer: unknown
    // Every other write as bytes, where the provider writes bytes: they are held (and dropped) alike.
    const asBytes = writeBytes !== undefined && index % 2 === 1
    try {
      answer = asBytes ? writeBytes(id, HELD_WRITE_CHUNK_BYTES) : h.provider.write(id, HELD_WRITE_CHUNK)
    } catch (error) {
      answer = Promise.reject(error)
    }
    if (!isThenable(answer)) {
      writes.push({ index, asBytes, outcome: { settlement: answer }, known: Promise.resolve() })
      if (!isWriteSettlement(answer) || answer.kind !== 'accepted') break
      continue
    }
    promised += 1
    const write: TrackedWrite = {
      index,
      asBytes,
      outcome: undefined,
      known: Promise.resolve(answer).then(
        (settlement) => {
          write.outcome = { settlement }
        },
        (error: unknown) => {
          write.outcome = { rejected: error }
        },
      ),
    }
    writes.push(write)
  }
  return writes
}

/**
 * Wait (driving the provider) until no write settled for {@link HELD_WRITE_QUIET_MS}, every write
 * settled, or `deadline` (on the `performance.now()` clock) passed.
 */
async function untilQuiet(h: PtyProviderConformanceHarness, options: PtyProviderConformanceOptions, writes: readonly TrackedWrite[], deadline: number): Promise<void> {
  const settledCount = (): number => writes.filter((write) => write.outcome !== undefined).length
  // The timers' own clock: a provider's test that mocks `Date` must not make this wait run for ever.
  let seen = settledCount()
  let quietSince = performance.now()
  while (seen < writes.length && performance.now() - quietSince < HELD_WRITE_QUIET_MS && performance.now() < deadline) {
    await options.drive?.(h.provider)
    await new Promise((resolve) => setTimeout(resolve, CONFORMANCE_POLL_INTERVAL_MS))
    const now = settledCount()
    if (now !== seen) quietSince = performance.now()
    seen = now
  }
}

/** Whether `settlement` is what a write whose held bytes the PTY's end dropped settles. */
function isDroppedAtExit(settlement: WriteSettlement): boolean {
  if (settlement.kind === 'refused') return settlement.reason === 'pty_exited'
  return settlement.kind === 'unverifiable' && settlement.reason === 'partial_write' && settlement.bytesHandedToTransport
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
