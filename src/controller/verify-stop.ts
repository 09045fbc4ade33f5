import type { PtyProvider } from '../contracts/index.js'
import { incarnationMatches, type PtyRecord } from './pty-record.js'

/**
 * What a host said when asked whether a stopped incarnation is gone:
 *
 * - `absent`: proven gone (an authoritative listing without it, or a probe answering `false`);
 * - `present`: the host still sees it (a listing row of this incarnation, or a probe `true`);
 * - `failed`: the listing failed — unknown, with the error;
 * - `no_evidence`: the host has no authoritative listing and its probe is missing or unsure;
 * - `deadline`: the deadline came first.
 */
export type StopVerification =
  | { kind: 'absent' }
  | { kind: 'present' }
  | { kind: 'failed'; error: unknown }
  | { kind: 'no_evidence' }
  | { kind: 'deadline' }

/**
 * Ask the owning provider whether the record's incarnation is gone. An authoritative listing
 * decides (a row with a *different* incarnation is a replacement and does not count); otherwise
 * the liveness probe (errors are doubt). Never throws.
 */
export async function verifyStop(
  record: PtyRecord,
  deadlinePassed: Promise<'deadline'>,
  remainingMs: () => number,
): Promise<StopVerification> {
  const provider: PtyProvider = record.provider
  if (provider.authoritativeListings === true) {
    let listing: Promise<unknown>
    try {
      listing = Promise.resolve(provider.listProcesses({ deadlineMs: remainingMs() }))
    } catch (error) {
      listing = Promise.reject(error)
    }
    const answer = await Promise.race([
      listing.then(
        (rows) => ({ rows }),
        (error: unknown) => ({ error }),
      ),
      deadlinePassed,
    ])
    if (answer === 'deadline') return { kind: 'deadline' }
    if ('error' in answer) return { kind: 'failed', error: answer.error }
    if (!Array.isArray(answer.rows)) return { kind: 'failed', error: new TypeError('The listing is not an array') }
    const listed = answer.rows.some(
      (row: { id?: unknown; incarnationId?: PtyRecord['incarnationId'] }) =>
        row?.id === record.ptyId && incarnationMatches(record, row.incarnationId),
    )
    return listed ? { kind: 'present' } : { kind: 'absent' }
  }
  if (provider.probeLiveness !== undefined) {
    let probe: Promise<unknown>
    try {
      probe = Promise.resolve(provider.probeLiveness(record.ptyId))
    } catch (error) {
      probe = Promise.reject(error)
    }
    const answer = await Promise.race([probe.catch(() => null), deadlinePassed])
    if (answer === 'deadline') return { kind: 'deadline' }
    if (answer === false) return { kind: 'absent' }
    if (answer === true) return { kind: 'present' }
  }
  return { kind: 'no_evidence' }
}
