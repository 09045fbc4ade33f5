import { probedIncarnation } from '../contracts/liveness-probe-options.js'
import { assertCwdOptions, assertListProcessesOptions, assertPtyIdArgument } from '../contracts/provider-arguments.js'
import { isOptionsObject } from '../contracts/known-options.js'
import { NodePtyOptionError } from './node-pty-option-error.js'
import { basename } from 'node:path'
import {
  remainingWaitMs,
  resolveWaitDeadline,
  type PtyCwdOptions,
  type PtyForegroundProcessEvidence,
  type PtyListProcessesOptions,
  type PtyLivenessProbeOptions,
  type PtyProcessInfo,
} from '../contracts/index.js'
import { settleWithin } from '../contracts/settle-within.js'
import { confirmForegroundProcess } from './foreground-evidence.js'
import { reapReported, recognizeLeader } from './leader-identity.js'
import { ListingPasses } from './listing-pass.js'
import type { NodePtySession } from './node-pty-session.js'
import { isDefunct, type ProcessInspector } from './process-inspector.js'
import { foregroundOfLeader, hasLiveChildren, readForegroundProcess } from './process-tree.js'
import type { NodePtyProviderContext } from './provider-context.js'

/** What a listing row says beyond membership: read from the OS, `null` when it cannot be read. */
type ListingDetails = { cwd: string | null; title: string | null }

const NO_DETAILS: ListingDetails = { cwd: null, title: null }

/** The foreground process's cwd, else the leader's (`getCwd`'s default answer, and a listing row's). */
async function foregroundCwd(inspector: ProcessInspector, foreground: { pid: number } | null, leaderPid: number): Promise<string | null> {
  const cwd = foreground === null ? null : await inspector.cwd(foreground.pid)
  return cwd ?? (foreground?.pid === leaderPid ? null : inspector.cwd(leaderPid))
}

/**
 * The cwd and title of one session's row, as `getCwd` and `getForegroundProcess` answer them, from
 * one read of the leader (two or three reads in all; synchronous only when the leader is found
 * dead or replaced, for the session to notice): the leader's start time
 * (learnt here when no look learnt it before) tells it from a later process that reuses its pid,
 * and a dead (zombie) or replaced leader is never described. Never rejects.
 */

async function describeSession(inspector: ProcessInspector, session: NodePtySession): Promise<ListingDetails> {
  if (session.exit !== null || session.leaderGone) return NO_DETAILS
  try {
    // Why noted before the read: a start time is learnt only from a read made while the reap was
    // unreported (see leader-identity.ts).
    const unreportedAtRead = !reapReported(session)
    const leader = await inspector.read(session.pid)
    if (leader === null) return NO_DETAILS
    if (isDefunct(leader) || !recognizeLeader(session, leader, unreportedAtRead)) {
      // Dead or reaped: let the session notice (its drain starts), and describe nothing.
      session.checkLeader()
      return NO_DETAILS
    }
    const target = await foregroundOfLeader(inspector, leader)
    return { cwd: await foregroundCwd(inspector, target, session.pid), title: target.name }
  } catch {
    return NO_DETAILS
  }
}

/** The node-pty provider's read-only queries over its sessions (cwd, foreground, listings, liveness). */
export type NodePtyQueries = {
  /** See `PtyProvider.getCwd`. */
  getCwd(id: string, options?: PtyCwdOptions): Promise<string | null>
  /** See `PtyProvider.getForegroundProcess`. */
  getForegroundProcess(id: string): Promise<string | null>
  /** See `PtyProvider.confirmForeground`. */
  confirmForeground(id: string): Promise<PtyForegroundProcessEvidence | null>
  /** See `PtyProvider.hasChildProcesses`. */
  hasChildProcesses(id: string): Promise<boolean | null>
  /** See `PtyProvider.probeLiveness`. */
  probeLiveness(id: string, options?: PtyLivenessProbeOptions): Promise<boolean | null>
  /** See `PtyProvider.listProcesses`. */
  listProcesses(options?: PtyListProcessesOptions): Promise<PtyProcessInfo[]>
}

/**
 * The queries of a node-pty provider. Listings share their OS reads: every listing in flight
 * joins one {@link ListingPasses} pass, so concurrent listings (hosts' `listProcesses`, spawn
 * owner proofs) read each live PTY once per pass, not once per listing. A stop verification asks
 * for membership only (`membershipOnly`) and reads nothing.
 */
export function createNodePtyQueries(context: NodePtyProviderContext): NodePtyQueries {
  const { inspector, sessions, hostId } = context
  const passes = new ListingPasses<NodePtySession, ListingDetails>((session) => describeSession(inspector, session))

  async function getCwd(id: string, options: PtyCwdOptions = {}): Promise<string | null> {
    assertPtyIdArgument(id)
    assertCwdOptions(options)
    const session = sessions.running(id)
    if (session === undefined) return null
    if (options.of === 'leader') return inspector.cwd(session.pid)
    return foregroundCwd(inspector, await readForegroundProcess(inspector, session.pid), session.pid)
  }

  function baseRow(session: NodePtySession, details: ListingDetails): PtyProcessInfo {
    const row: PtyProcessInfo = {
      id: session.id,
      hostId,
      incarnationId: session.incarnationId,
      pid: session.pid,
      cwd: details.cwd,
      title: details.title ?? basename(session.file),
    }
    if (session.scopeId !== undefined) row.scopeId = session.scopeId
    if (session.slotKey !== undefined) row.slotKey = session.slotKey
    if (session.claimKey !== undefined) row.claimKey = session.claimKey
    return row
  }

  return {
    getCwd,
    async getForegroundProcess(id) {
      assertPtyIdArgument(id)
      const session = sessions.running(id)
      if (session === undefined) return null
      return (await readForegroundProcess(inspector, session.pid))?.name ?? null
    },
    async confirmForeground(id) {
      assertPtyIdArgument(id)
      const session = sessions.running(id)
      if (session === undefined) return null
      const evidence = await confirmForegroundProcess(inspector, session.pid)
      // Why check again: the leader may have been reaped (and its pid reused) during the interval.
      session.checkLeader()
      return session.leaderGone || sessions.live(id) !== session ? null : evidence
    },
    async hasChildProcesses(id) {
      assertPtyIdArgument(id)
      const session = sessions.running(id)
      if (session === undefined) return null
      return hasLiveChildren(inspector, session.pid)
    },
    async probeLiveness(id, probeOptions) {
      assertPtyIdArgument(id)
      // About an incarnation: only its own process is it. Any other is `false`, proven: this provider
      // alone starts processes under its ids and holds one per id until that one's exit was
      // delivered, so a later incarnation under the id means the asked one ended (and one it never
      // minted never ran here).
      const asked = probedIncarnation(probeOptions)
      const session = sessions.running(id)
      if (session === undefined) return false
      return asked === undefined || session.incarnationId === asked
    },
    async listProcesses(listOptions: PtyListProcessesOptions = {}) {
      if (!isOptionsObject(listOptions)) throw new NodePtyOptionError('options', 'an object', listOptions, undefined, false, 'invalid_option')
      assertListProcessesOptions(listOptions)
      // Membership is known at once; the deadline (absolute `deadlineMs` or relative `timeoutMs`)
      // bounds only the OS reads of cwd and title. Past it (or when the caller reads membership
      // only, as a stop verification does): the rows without them, no waiting.
      const live = sessions.liveSessions()
      const bounded = listOptions.deadlineMs !== undefined || listOptions.timeoutMs !== undefined
      const waitMs = bounded ? remainingWaitMs(resolveWaitDeadline(listOptions, 0)) : undefined
      if (waitMs === 0 || live.length === 0 || listOptions.membershipOnly === true) return live.map((session) => baseRow(session, NO_DETAILS))
      const { results, done } = passes.request(live)
      await (waitMs === undefined ? done : settleWithin(done, waitMs, undefined))
      return live.map((session) => baseRow(session, results.get(session) ?? NO_DETAILS))
    },
  }
}
