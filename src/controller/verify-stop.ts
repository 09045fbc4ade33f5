import { incarnationsAgree } from '../contracts/incarnation.js'
import { callProvider } from '../contracts/call-provider.js'
import { malformedListing } from '../contracts/listing-rows.js'
import { askedTimeoutMs } from '../contracts/deadline.js'
import type { PtyIncarnationId, PtyProvider } from '../contracts/index.js'

/**
 * How often a `keepHistory` stop lists its host again while the PTY is still listed (the seed's
 * `KEEP_HISTORY_STOP_POLL_MS`): a host that keeps a session's history may list it for a moment
 * after the process is gone.
 */
export const KEEP_HISTORY_STOP_POLL_MS = 100

/** How long a `keepHistory` stop keeps listing (the seed's `KEEP_HISTORY_STOP_SETTLE_MS`), capped by the deadline. */
export const KEEP_HISTORY_STOP_SETTLE_MS = 1_000

/**
 * What a host said when asked whether a stopped incarnation is gone:
 *
 * - `absent`: proven gone (an authoritative listing without it, or a probe answering `false`);
 * - `present`: the host still sees it (a listing row of this incarnation, or a probe `true`);
 * - `failed`: the listing failed — unknown, with the error;
 * - `no_evidence`: not listed by a host whose listing is not authoritative, and its probe is missing or unsure;
 * - `deadline`: the deadline came first.
 */
export type StopVerification =
  | { kind: 'absent' }
  | { kind: 'present' }
  | { kind: 'failed'; error: unknown }
  | { kind: 'no_evidence' }
  | { kind: 'deadline' }

/** The PTY a stop is verified for: its owning provider, id and (when known) incarnation. */
export type StopTarget = {
  /** The owning host's provider. */
  provider: PtyProvider
  /** The PTY id. */
  ptyId: string
  /** The stopped incarnation; a listed row of another incarnation is a replacement. */
  incarnationId: PtyIncarnationId | undefined
}

/** How a verification waits: the deadline, the time left, and a pause between listings. */
export type StopVerificationTiming = {
  /** Resolves when the stop's deadline passed (or the wait was given up). */
  deadlinePassed: Promise<'deadline'>
  /** Milliseconds left until the deadline. */
  remainingMs: () => number
  /** Resolves after `ms` (the controller's clock). */
  sleep: (ms: number) => Promise<unknown>
}

function isListed(rows: readonly unknown[], target: StopTarget): boolean {
  return rows.some((row) => {
    const candidate = row as { id?: unknown; incarnationId?: PtyIncarnationId } | null
    if (candidate?.id !== target.ptyId) return false
    return incarnationsAgree(target.incarnationId, candidate.incarnationId)
  })
}

async function listOnce(target: StopTarget, timing: StopVerificationTiming): Promise<{ rows: unknown[] } | { error: unknown } | 'deadline'> {
  const listing: Promise<unknown> = callProvider(() => target.provider.listProcesses({ timeoutMs: askedTimeoutMs(timing.remainingMs()), membershipOnly: true }))
  const answer = await Promise.race([
    listing.then(
      (rows) => {
        const malformed = malformedListing(rows)
        return malformed === undefined ? { rows: rows as unknown[] } : { error: new TypeError(`Provider ${target.provider.name}: ${malformed}`) }
      },
      (error: unknown) => ({ error }),
    ),
    timing.deadlinePassed,
  ])
  return answer
}

/**
 * Ask the owning host whether the stopped incarnation is gone, as the seed's `verifyPtyStopped`
 * does: a **fresh listing** of the owning host, for every provider. Listed ⇒ `present` (with
 * `keepHistory`, the host is listed again every {@link KEEP_HISTORY_STOP_POLL_MS} for up to
 * {@link KEEP_HISTORY_STOP_SETTLE_MS}, capped by the deadline, before it counts). Not listed ⇒
 * `absent` when the listing is authoritative; otherwise the liveness probe decides (`false` ⇒
 * absent, `true` ⇒ present, anything else ⇒ `no_evidence`). Never throws.
 */
export async function verifyStop(target: StopTarget, timing: StopVerificationTiming, keepHistory = false): Promise<StopVerification> {
  const settleBy = timing.remainingMs() - Math.min(KEEP_HISTORY_STOP_SETTLE_MS, timing.remainingMs())
  for (;;) {
    const answer = await listOnce(target, timing)
    if (answer === 'deadline') return { kind: 'deadline' }
    if ('error' in answer) return { kind: 'failed', error: answer.error }
    if (!isListed(answer.rows, target)) break
    if (!keepHistory || timing.remainingMs() <= settleBy) return { kind: 'present' }
    const paused = await Promise.race([timing.sleep(KEEP_HISTORY_STOP_POLL_MS).then(() => 'slept' as const), timing.deadlinePassed])
    if (paused === 'deadline') return { kind: 'deadline' }
  }
  const provider = target.provider
  if (provider.authoritativeListings === true) return { kind: 'absent' }
  if (provider.probeLiveness !== undefined) {
    // About the stopped incarnation: a `true` about a replacement under the id is no presence of it.
    const { ptyId, incarnationId } = target
    const probe: Promise<unknown> = callProvider(() => (incarnationId === undefined ? provider.probeLiveness!(ptyId) : provider.probeLiveness!(ptyId, { incarnationId })))
    const answer = await Promise.race([probe.catch(() => null), timing.deadlinePassed])
    if (answer === 'deadline') return { kind: 'deadline' }
    if (answer === false) return { kind: 'absent' }
    if (answer === true) return { kind: 'present' }
  }
  return { kind: 'no_evidence' }
}
