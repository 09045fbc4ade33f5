import { expect } from './conformance-expect.js'
import { isPtyLiveOtherIncarnationError, isWriteSettlement, toPtyIncarnationId } from '../contracts/index.js'
import type { PtyProviderConformanceCheck, PtyProviderConformanceOptions } from './conformance-types.js'
import { ProviderCallHungError } from './conformance-harness.js'

/** An incarnation id no provider mints: the "other incarnation" an attach (or liveness probe) check names. */
export const FOREIGN_INCARNATION_ID = toPtyIncarnationId('ptykit-conformance-foreign-incarnation')

/** What a provider call answered, or what it threw (synchronously or as a rejection). */
async function outcomeOf(call: () => unknown): Promise<{ answer?: unknown; thrown?: unknown }> {
  try {
    return { answer: await call() }
  } catch (error) {
    return { thrown: error }
  }
}

/**
 * The provider-side rules a host ported from the seed origin relies on (issue 11): listings read
 * `deadlineMs` as an absolute epoch time (and refuse a duration given in its place), writes settle
 * with a `WriteSettlement`, an attach to a live PTY of another incarnation is refused as such
 * (never as an absence), every exit names the incarnation its spawn attested (the controller
 * drops exits that name none), and a stop of an id the provider never held resolves (already gone).
 * A listing that hangs fails the check: the harness bounds every provider call by the suite's
 * `timeoutMs`.
 *
 * @param options - how to drive the provider (as for the whole suite).
 */
export function seedRuleConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  return [
    {
      name: 'reads a listing’s `deadlineMs` as an absolute time: `Date.now() + 5000` lists the live PTY, a past deadline answers at once',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        const ahead = await h.provider.listProcesses({ deadlineMs: Date.now() + 5_000 })
        expect(ahead.map((row) => row.id)).toContain(result.id)
        const relative = await h.provider.listProcesses({ timeoutMs: 5_000 })
        expect(relative.map((row) => row.id)).toContain(result.id)
        // "Check once, do not wait": it settles; rows it gives must not read a live PTY as gone.
        let past: { id: string }[] | undefined
        try {
          past = await h.provider.listProcesses({ deadlineMs: Date.now() - 1 })
        } catch (error) {
          // A hang is a failure (the harness bounds every call); a refusal is an answer.
          if (error instanceof ProviderCallHungError) throw error
          past = undefined
        }
        if (past !== undefined) expect(past.map((row) => row.id)).toContain(result.id)
      },
    },
    {
      name: 'refuses a duration given as `deadlineMs` (`5000` is in 1970) with a TypeError naming it, in a stop and a listing, and stops nothing',
      async run(h) {
        // Read as the epoch time it is, 5000 is a deadline 56 years past: a stop would skip its
        // grace and KILL at once. Every provider refuses it (`resolveWaitDeadline` does).
        const live = await h.spawn(options.spawnLongRunning())
        const calls: [string, () => Promise<unknown>][] = [
          ['shutdown(id, { deadlineMs: 5000 })', () => h.provider.shutdown(live.id, { deadlineMs: 5_000 })],
          ['listProcesses({ deadlineMs: 5000 })', () => h.provider.listProcesses({ deadlineMs: 5_000 })],
        ]
        for (const [call, run] of calls) {
          const { thrown } = await outcomeOf(run)
          expect(thrown, `${call} must reject with a TypeError`).toBeInstanceOf(TypeError)
          expect((thrown as Error).message, `${call}: the error names the option`).toMatch(/`deadlineMs`/)
        }
        if (h.provider.probeLiveness !== undefined) expect(await h.provider.probeLiveness(live.id), 'the PTY after the refused stop').not.toBe(false)
        const rows = await h.provider.listProcesses({ timeoutMs: 5_000 })
        expect(rows.map((row) => row.id), 'the PTY after the refused stop').toContain(live.id)
      },
    },
    {
      name: 'resolves a stop of an id it never held (already gone, as the contract and the seed origin read it), stopping nothing else',
      async run(h) {
        // `shutdown` resolves "when the stop was carried out (or the PTY was already gone)": a
        // stop of an unknown id is no failure — the seed origin's stopAndWait reads it so and
        // verifies absence by the listing. A rejection would read as "could not be dispatched".
        const live = await h.spawn(options.spawnLongRunning())
        const unknown = `${live.id}-never-spawned`
        for (const immediate of [false, true]) {
          const { thrown } = await outcomeOf(() => h.provider.shutdown(unknown, { immediate }))
          if (thrown instanceof ProviderCallHungError) throw thrown
          expect(thrown, `shutdown of an id it never held ({ immediate: ${String(immediate)} }) must resolve`).toBeUndefined()
        }
        if (h.provider.probeLiveness !== undefined) expect(await h.provider.probeLiveness(unknown), 'the id it never held').not.toBe(true)
        const rows = await h.provider.listProcesses({ timeoutMs: 5_000 })
        expect(rows.map((row) => row.id), 'its live PTY after the stop of an unknown id').toContain(live.id)
        expect(rows.map((row) => row.id)).not.toContain(unknown)
      },
    },
    {
      name: 'settles every write with a well-formed WriteSettlement (live, exited and unknown PTYs)',
      async run(h) {
        const live = await h.spawn(options.spawnLongRunning())
        const ended = await h.spawn(options.spawnExit(0))
        await h.waitForExit(ended.id)
        const answers = [
          await h.provider.write(live.id, '\r'),
          await h.provider.write(ended.id, 'too late\r'),
          await h.provider.write('ptykit-conformance-no-such-pty', 'hello\r'),
        ]
        for (const answer of answers) expect(isWriteSettlement(answer), `write answered ${JSON.stringify(answer)}`).toBe(true)
      },
    },
    {
      name: 'refuses a write whose data is not a string with a TypeError, never a settlement claiming bytes were handed over',
      async run(h) {
        const live = await h.spawn(options.spawnLongRunning())
        for (const data of [42, Buffer.from('x'), undefined]) {
          const { answer, thrown } = await outcomeOf(() => h.provider.write(live.id, data as never))
          expect(thrown, `write(id, ${typeof data}) answered ${JSON.stringify(answer)}`).toBeInstanceOf(TypeError)
        }
        // The PTY is unharmed: a well-formed write after them is not refused.
        const after = await h.provider.write(live.id, '\r')
        expect(isWriteSettlement(after) && after.kind !== 'refused', `write after them answered ${JSON.stringify(after)}`).toBe(true)
      },
    },
    {
      name: 'refuses an attach-only spawn of a live PTY under another incarnation with `pty_live_other_incarnation`, never `pty_absent`, and starts nothing',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        if (result.incarnationId === undefined) return
        const refusal = await h.provider
          .spawn({ sessionId: result.id, attachOnly: true, expectedIncarnationId: FOREIGN_INCARNATION_ID })
          .then(
            (reply) => ({ reply }),
            (error: unknown) => ({ error }),
          )
        expect('error' in refusal, 'an attach to another incarnation must be refused').toBe(true)
        if ('error' in refusal) expect(isPtyLiveOtherIncarnationError(refusal.error), `refused with ${String(refusal.error)}`).toBe(true)
        const rows = (await h.provider.listProcesses()).filter((row) => row.id === result.id)
        expect(rows).toHaveLength(1)
        if (rows[0]?.incarnationId !== undefined) expect(rows[0].incarnationId).toBe(result.incarnationId)
      },
    },
    {
      name: 'names the spawned incarnation on every exit (own exit and stop alike)',
      async run(h) {
        const exiting = await h.spawn(options.spawnExit(5))
        const stopped = await h.spawn(options.spawnLongRunning())
        await h.provider.shutdown(stopped.id)
        for (const result of [exiting, stopped]) {
          const exit = await h.waitForExit(result.id)
          if (result.incarnationId !== undefined) expect(exit.incarnationId).toBe(result.incarnationId)
        }
      },
    },
  ]
}
