import { expect } from './conformance-expect.js'
import { isWriteSettlement, type PtyIncarnationId, type ProviderProcessInfo, type PtySpawnResult, type WriteSettlement } from '../contracts/index.js'
import { malformedListing } from '../contracts/listing-rows.js'
import { MAX_PTY_DIMENSION } from '../contracts/pty-dimension.js'
import { CONFORMANCE_DEFAULT_TIMEOUT_MS, type PtyProviderConformanceCheck, type PtyProviderConformanceHarness, type PtyProviderConformanceOptions } from './conformance-types.js'
import { FOREIGN_INCARNATION_ID } from './conformance-seed-checks.js'

// The conformance checks of what a provider answers about its PTYs: writes, liveness, listings,
// size, process inspection, and that dispose leaves nothing running.

/** The checks of writes, liveness, listings, size, process inspection and dispose (see `ptyProviderConformanceChecks`). */
export function inventoryConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  const capabilities = options.capabilities ?? {}
  return [
    {
      name: 'never accepts a write after exit, nor to an unknown id, and refuses one after an exit it reported at once',
      async run(h) {
        const result = await h.spawn(options.spawnExit(0))
        await h.waitForExit(result.id)
        const answer = h.provider.write(result.id, 'too late\r')
        // Settled first: a rejected promise must fail this check, not escape it unhandled.
        const afterExit = await settlementOf(answer)
        // Why at once: the controller's boolean `write` reads a pending settlement as "handed
        // over", so a refusal the provider knows before any I/O must not come back as a promise.
        expect(answer instanceof Promise, 'a write after the exit this provider reported answers its refusal synchronously, not as a promise').toBe(false)
        expect(afterExit.kind).not.toBe('accepted')
        const unknown = await settlementOf(h.provider.write('ptykit-conformance-no-such-pty', 'hello\r'))
        expect(unknown.kind).not.toBe('accepted')
      },
    },
    {
      name: 'never answers `false` for a live PTY, and does not refuse its writes',
      async run(h) {
        const result = await h.spawn(options.spawnLongRunning())
        if (h.provider.hasPty !== undefined) expect(h.provider.hasPty(result.id)).not.toBe(false)
        if (h.provider.probeLiveness !== undefined) expect(await h.provider.probeLiveness(result.id)).not.toBe(false)
        const settlement = await settlementOf(h.provider.write(result.id, '\r'))
        expect(['accepted', 'unverifiable']).toContain(settlement.kind)
      },
    },
    {
      name: 'answers a liveness probe naming an incarnation about that one: never `false` for the live one, never `true` about another (when it attests incarnations)',
      async run(h) {
        if (h.provider.probeLiveness === undefined) return
        const result = await h.spawn(options.spawnLongRunning())
        if (result.incarnationId === undefined) return
        expect(await h.provider.probeLiveness(result.id, { incarnationId: result.incarnationId }), 'probeLiveness(id, { incarnationId }) of the live incarnation').not.toBe(false)
        // Why: a controller asks about the incarnation it holds; a `true` about whatever process
        // holds the id now would call its dead PTY live.
        expect(
          await h.provider.probeLiveness(result.id, { incarnationId: FOREIGN_INCARNATION_ID }),
          'probeLiveness(id, { incarnationId }) of another incarnation than the live one must not answer true: answer about the incarnation named (false when proven gone, else null)',
        ).not.toBe(true)
      },
    },
    {
      name: 'never answers a liveness probe `true` about an incarnation its id no longer holds (after a respawn under the same id)',
      async run(h) {
        if (h.provider.probeLiveness === undefined) return
        const respawned = await respawnUnderSameId(h, options)
        if (respawned === undefined) return
        const { first, second } = respawned
        expect(
          await h.provider.probeLiveness(first.id, { incarnationId: first.incarnationId }),
          'probeLiveness(id, { incarnationId }) of an ended incarnation whose id a respawn took must not answer true about the respawned process',
        ).not.toBe(true)
        expect(await h.provider.probeLiveness(second.id, { incarnationId: second.incarnationId }), 'probeLiveness of the respawned incarnation').not.toBe(false)
      },
    },
    {
      name: 'lists every live PTY, and no exited one when listings are authoritative',
      async run(h) {
        const first = await h.spawn(options.spawnLongRunning())
        const second = await h.spawn(options.spawnLongRunning())
        const listed = await readableListing(h)
        for (const result of [first, second]) {
          const row = listed.find((candidate) => candidate.id === result.id)
          expect(row, `listing row of ${result.id}`).toBeDefined()
          expect(typeof row?.hostId).toBe('string')
          if (row?.incarnationId !== undefined && result.incarnationId !== undefined) {
            expect(row.incarnationId).toBe(result.incarnationId)
          }
        }
        await h.provider.shutdown(first.id, { immediate: true })
        await h.waitForExit(first.id)
        if (capabilities.authoritativeListings ?? h.provider.authoritativeListings === true) {
          const after = (await readableListing(h)).map((row) => row.id)
          expect(after).not.toContain(first.id)
          expect(after).toContain(second.id)
        }
      },
    },
    {
      name: 'keeps a PTY in an authoritative listing until its exit is reported (a stop in flight proves nothing early)',
      async run(h) {
        if (!(capabilities.authoritativeListings ?? h.provider.authoritativeListings === true)) return
        const result = await h.spawn(options.spawnLongRunning())
        const stopping = h.provider.shutdown(result.id).then(
          () => undefined,
          () => undefined,
        )
        // Why: the controller reads an absence from an authoritative listing as proof the process
        // is gone, and verifies a stop by it; absent before the exit report, the process may
        // still run (a kill not landed yet), and the stop would be "verified" while it does.
        const deadline = performance.now() + (options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS)
        for (;;) {
          if (performance.now() > deadline) throw new Error(`No exit of PTY ${JSON.stringify(result.id)} was reported within the timeout after its stop`)
          const listed = (await readableListing(h)).some((row) => row.id === result.id)
          const exited = h.exitsOf(result.id).length > 0
          expect(
            listed || exited,
            `PTY ${JSON.stringify(result.id)} left the authoritative listing before its exit was reported: keep it listed until the exit event is sent`,
          ).toBe(true)
          if (exited && !listed) break
          if (exited) {
            await h.waitForExit(result.id)
            expect((await readableListing(h)).map((row) => row.id), 'an exited PTY leaves an authoritative listing').not.toContain(result.id)
            break
          }
          await options.drive?.(h.provider)
          await new Promise((resolve) => setTimeout(resolve, 2))
        }
        await stopping
      },
    },
    {
      name: 'lists the new incarnation after a respawn under the same id (when it takes a caller’s session id)',
      async run(h) {
        const respawned = await respawnUnderSameId(h, options)
        if (respawned === undefined) return
        const { first, second } = respawned
        expect(second.incarnationId, 'a respawn under the same id is a new incarnation').not.toBe(first.incarnationId)
        const rows = (await readableListing(h)).filter((row) => row.id === second.id)
        expect(rows, 'one row for the respawned id').toHaveLength(1)
        // Why: a row of another incarnation reads as a replacement — the old one counts as gone.
        // A row that kept the first incarnation would "verify" a stop of the new one while it runs.
        if (rows[0]?.incarnationId !== undefined) {
          expect(rows[0].incarnationId, 'the row of a respawned id carries the incarnation now live, not the first one').toBe(second.incarnationId)
        }
      },
    },
    {
      name: 'reflects a resize where the size can be read back, and refuses to resize an unknown PTY',
      async run(h) {
        const result = await h.spawn({ ...options.spawnLongRunning(), cols: 80, rows: 24 })
        expect(h.provider.resize(result.id, 100, 30)).toBe(true)
        const readback = capabilities.resizeReadback ?? h.provider.getSize !== undefined
        if (readback && h.provider.getSize !== undefined) {
          expect(h.provider.getSize(result.id)).toEqual({ cols: 100, rows: 30 })
        }
        expect(h.provider.resize('ptykit-conformance-no-such-pty', 100, 30)).toBe(false)
      },
    },
    {
      name: 'refuses a size that is not an integer from 1 to 65535 (0, negative, fractional, NaN, infinite, too large, a string) with `code: \'invalid_option\'`, the `option` and the `value`, leaving the PTY as it was',
      async run(h) {
        const result = await h.spawn({ ...options.spawnLongRunning(), cols: 80, rows: 24 })
        const readback = capabilities.resizeReadback ?? h.provider.getSize !== undefined
        for (const option of ['cols', 'rows'] as const) {
          for (const value of BAD_PTY_DIMENSIONS) {
            const [cols, rows] = option === 'cols' ? [value, 24] : [80, value]
            const call = `resize(id, ${describeDimension(cols)}, ${describeDimension(rows)})`
            let answer: unknown
            let thrown: unknown
            try {
              answer = h.provider.resize(result.id, cols as number, rows as number)
            } catch (error) {
              thrown = error
            }
            // Why thrown, with a code: the controller refuses the same sizes so, and a host that
            // calls the provider directly (or a terminal handle over it) matches on `code`; a
            // `false` would read as "the PTY is gone", and a `true` resized it to what the
            // kernel wraps (65 536 rows is 0) or the provider rounds.
            expect(
              typeof thrown === 'object' && thrown !== null,
              `${call} ${thrown === undefined ? `answered ${String(answer)}` : `threw ${String(thrown)}`}: a bad size is refused by throwing an error with code 'invalid_option', option and value`,
            ).toBe(true)
            const error = thrown as { code?: unknown; option?: unknown; value?: unknown; message?: unknown }
            expect(error.code, `${call}: the error's code`).toBe('invalid_option')
            expect(error.option, `${call}: the error's option`).toBe(option)
            expect(error.value, `${call}: the error's value`).toBe(value)
            expect(error.message, `${call}: the message names the argument`).toContain(`\`${option}\``)
            expect(error.message, `${call}: the message shows the value`).toContain(typeof value === 'string' ? JSON.stringify(value) : String(value))
          }
        }
        // Nothing was applied, and the PTY still takes a good size.
        if (readback && h.provider.getSize !== undefined) expect(h.provider.getSize(result.id), 'the size after the refused resizes').toEqual({ cols: 80, rows: 24 })
        expect(h.exitsOf(result.id), 'a refused resize does not end the PTY').toEqual([])
        expect(h.provider.resize(result.id, 100, 30), 'a good resize after the refused ones').toBe(true)
      },
    },
    {
      name: 'confirms foreground evidence only for a live PTY, and never makes it up (when it offers confirmForeground)',
      async run(h) {
        const confirm = h.provider.confirmForeground
        if (confirm === undefined) return
        const supports = h.provider.supportsForegroundProcessEvidence?.()
        if (supports !== undefined) expect(typeof supports).toBe('boolean')
        const result = await h.spawn(options.spawnLongRunning())
        const live = await confirm.call(h.provider, result.id)
        if (live !== null) {
          expect(typeof live.foregroundProcess).toBe('string')
          expect(live.foregroundProcess.length).toBeGreaterThan(0)
          expect(typeof live.shellForeground).toBe('boolean')
          expect(JSON.parse(JSON.stringify(live))).toEqual(live)
        }
        if (supports === false) expect(live).toBeNull()
        expect(await confirm.call(h.provider, 'ptykit-conformance-no-such-pty')).toBeNull()
        await h.provider.shutdown(result.id, { immediate: true })
        await h.waitForExit(result.id)
        expect(await confirm.call(h.provider, result.id)).toBeNull()
      },
    },
    {
      name: 'resets input modes of a live PTY and ignores unknown ids (when it offers resetInputModes)',
      async run(h) {
        const reset = h.provider.resetInputModes
        if (reset === undefined) return
        const result = await h.spawn(options.spawnLongRunning())
        await reset.call(h.provider, result.id)
        await reset.call(h.provider, 'ptykit-conformance-no-such-pty')
        // Resetting modes is not output and not a stop: the PTY is still live.
        expect(h.exitsOf(result.id)).toEqual([])
        if (h.provider.hasPty !== undefined) expect(h.provider.hasPty(result.id)).not.toBe(false)
      },
    },
    {
      name: 'leaves nothing running after dispose',
      async run(h) {
        const first = await h.spawn(options.spawnLongRunning())
        const second = await h.spawn(options.spawnLongRunning())
        if (h.provider.dispose === undefined) {
          // A provider without dispose must at least let every PTY be stopped.
          for (const result of [first, second]) await h.provider.shutdown(result.id, { immediate: true })
        } else {
          await h.provider.dispose()
        }
        const exitsReported = capabilities.exitsOnDispose !== false || h.provider.dispose === undefined
        if (exitsReported) {
          for (const result of [first, second]) await h.waitForExit(result.id)
        }
        // A provider may refuse every call after dispose (use after dispose is a programmer error);
        // then its exits are the only evidence, and they must have been reported.
        let listed: string[] | undefined
        try {
          listed = (await h.provider.listProcesses()).map((row) => row.id)
        } catch {
          listed = undefined
        }
        expect(exitsReported || listed !== undefined, 'dispose must be verifiable: report exits or keep listing').toBe(true)
        if (listed !== undefined) {
          expect(listed).not.toContain(first.id)
          expect(listed).not.toContain(second.id)
        }
        if (listed !== undefined && h.provider.hasPty !== undefined) {
          for (const result of [first, second]) {
            expect(h.provider.hasPty(result.id), `hasPty(${JSON.stringify(result.id)}) after dispose, which stopped it: it must not answer true`).not.toBe(true)
          }
        }
      },
    },
  ]
}

/**
 * Sizes no PTY can have (see `MAX_PTY_DIMENSION`): zero, negative, fractional, not a number,
 * infinite, one past the kernel's `unsigned short` (65 536 wraps to 0), far past it, and a string.
 */
const BAD_PTY_DIMENSIONS: readonly unknown[] = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_PTY_DIMENSION + 1, 1_000_000_000, '80']

/** A size in a call's description: a string quoted, a number as written. */
function describeDimension(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}

/**
 * A write's answer once settled — synchronous or not — failing the check, with a message, when it
 * rejects or is not a `WriteSettlement`: the contract's `write` never rejects.
 */
async function settlementOf(answer: WriteSettlement | Promise<WriteSettlement>): Promise<WriteSettlement> {
  let settled: unknown
  try {
    settled = await answer
  } catch (error) {
    throw new Error(`write rejected (${String(error)}): it must settle with a WriteSettlement, never reject — answer refused(...) or unverifiable(...) instead`)
  }
  expect(isWriteSettlement(settled), `write answered ${JSON.stringify(settled)}, not a WriteSettlement`).toBe(true)
  return settled as WriteSettlement
}

/** The provider's listing, failing the check with the first row the controller could not read. */
/**
 * A long-running PTY stopped, then respawned under its id (a caller's session id). `undefined` when
 * the provider has nothing to mix up there: it never reuses an id (refuses it as in use), mints
 * its own ids, or attests no incarnation.
 */
async function respawnUnderSameId(
  h: PtyProviderConformanceHarness,
  options: PtyProviderConformanceOptions,
): Promise<{ first: PtySpawnResult & { incarnationId: PtyIncarnationId }; second: PtySpawnResult & { incarnationId: PtyIncarnationId } } | undefined> {
  const first = await h.spawn(options.spawnLongRunning())
  await h.provider.shutdown(first.id, { immediate: true })
  await h.waitForExit(first.id)
  const second = await h.spawn({ ...options.spawnLongRunning(), sessionId: first.id, isNewSession: true }).catch((error: unknown) => {
    if ((error as { code?: unknown } | null)?.code === 'pty_id_in_use') return undefined
    throw error
  })
  if (second === undefined || second.id !== first.id || second.incarnationId === undefined || first.incarnationId === undefined) return undefined
  return { first: { ...first, incarnationId: first.incarnationId }, second: { ...second, incarnationId: second.incarnationId } }
}

async function readableListing(h: PtyProviderConformanceHarness): Promise<ProviderProcessInfo[]> {
  const rows = await h.provider.listProcesses()
  expect(malformedListing(rows), 'every listing row is an object with a non-empty string `id`, and `incarnationId`, `claimKey`, `scopeId` and `slotKey` each absent or a non-empty string').toBeUndefined()
  return rows
}
