import { probedIncarnation } from '../contracts/liveness-probe-options.js'
import { basename } from 'node:path'
import { settleWithin } from '../contracts/settle-within.js'
import { remainingWaitMs, resolveWaitDeadline, type ExecutionHostId, type PtyCwdOptions, type PtyListProcessesOptions, type PtyLivenessProbeOptions, type PtyProcessInfo } from '../contracts/index.js'
import { inspectRemoteProcess, probeRemotePid, type RemoteInspection } from './remote-process.js'
import { judgeOfLostSessionConnecting, probeLostSession } from './ssh-lost-sessions.js'
import type { SshConnectionKeeper } from './ssh-connection-keeper.js'
import { SshProviderError } from './ssh-provider-error.js'
import type { SshPtySession, SshPtyState } from './ssh-pty-session.js'
import type { SshSessionTable } from './ssh-session-table.js'
import { SSH_SIDE_COMMAND_TIMEOUT_MS } from './ssh-stop.js'

/** What the queries need from their provider. */
export type SshQueryContext = {
  /** The provider's host id, on every listing row. */
  hostId: ExecutionHostId
  /** The PTYs. */
  table: SshSessionTable
  /** Whether the connection is up (a listing needs it). */
  keeper: SshConnectionKeeper
  /** Throws `provider_disposed` once the provider is disposed. */
  assertNotDisposed(method: string): void
}

/** The provider's queries: membership, liveness, listings and the remote /proc reads. */
export type SshQueries = {
  listProcesses(options?: PtyListProcessesOptions): Promise<PtyProcessInfo[]>
  hasPty(id: string): boolean | null
  probeLiveness(id: string, options?: PtyLivenessProbeOptions): Promise<boolean | null>
  getCwd(id: string, options?: PtyCwdOptions): Promise<string | null>
  getForegroundProcess(id: string): Promise<string | null>
  hasChildProcesses(id: string): Promise<boolean | null>
  getPid(id: string): number | null
}

/**
 * The queries of an SSH provider. A dropped connection makes a PTY unknown, never absent: its
 * liveness is `null` and a listing rejects rather than answer without it.
 */
export function createSshQueries(context: SshQueryContext): SshQueries {
  const { hostId, table } = context

  /** The remote process's cwd, foreground program and children; `null` when it cannot be read. */
  async function inspect(id: string): Promise<RemoteInspection | null> {
    const session = table.live(id)
    if (session === undefined || session.marker === null || session.connection.lost) return null
    return inspectRemoteProcess(session.connection, session.marker, SSH_SIDE_COMMAND_TIMEOUT_MS)
  }

  function listingRow(session: SshPtySession, inspection: RemoteInspection | null): PtyProcessInfo {
    const row: PtyProcessInfo = {
      id: session.id,
      hostId,
      incarnationId: session.incarnationId,
      pid: session.marker?.pid ?? 0,
      cwd: inspection?.cwd ?? null,
      title: inspection?.foreground ?? (session.launch.file === null ? 'shell' : basename(session.launch.file)),
    }
    if (session.scopeId !== undefined) row.scopeId = session.scopeId
    if (session.slotKey !== undefined) row.slotKey = session.slotKey
    if (session.claimKey !== undefined) row.claimKey = session.claimKey
    return row
  }

  return {
    async listProcesses(listOptions: PtyListProcessesOptions = {}): Promise<PtyProcessInfo[]> {
      // Checked first, as shutdown does: a malformed budget is a programmer error, never hidden
      // behind a dropped connection or a disposed provider.
      // Membership is known at once; the deadline bounds only the remote reads of cwd and title.
      const deadline = resolveWaitDeadline(listOptions, SSH_SIDE_COMMAND_TIMEOUT_MS)
      context.assertNotDisposed('listProcesses')
      // An unreachable host must never answer with a list: its PTYs are unknown, not absent.
      if (!context.keeper.isConnected()) {
        throw new SshProviderError('transport_lost', `The SSH connection to ${hostId} is down: its PTYs cannot be listed`)
      }
      // A caller that reads only membership (a stop verification) costs no remote command.
      if (listOptions.membershipOnly === true) return table.inState('live').map((session) => listingRow(session, null))
      return Promise.all(
        table.inState('live').map(async (session) => {
          const inspection = await settleWithin(inspect(session.id), remainingWaitMs(deadline), null)
          return listingRow(session, inspection)
        }),
      )
    },
    hasPty(id: string): boolean | null {
      const session = table.get(id)
      // The end is proven (the server reported it, or a look found it gone): dead, even while its exit waits behind output.
      if (session === undefined || session.endProven) return false
      if (session.state === 'lost') return null
      return session.state !== 'exited'
    },
    async probeLiveness(id: string, probeOptions?: PtyLivenessProbeOptions): Promise<boolean | null> {
      const asked = probedIncarnation(probeOptions)
      const session = table.get(id)
      // The end is proven: dead, even while its exit waits behind output.
      if (session === undefined || session.endProven) return false
      // About another incarnation than the id's: proven gone. The table holds one session per id —
      // a lost one too — until its exit was delivered, and only this provider starts sessions under
      // its ids, so a later incarnation means the asked one ended (or never ran here).
      if (asked !== undefined && asked !== session.incarnationId) return false
      // Asked of a connection on the same machine and boot, if one is open (its exit reported when proven gone).
      if (session.state === 'lost' || session.connection.lost) {
        // With no connection open (the background reconnects gave up), one is opened to ask.
        await judgeOfLostSessionConnecting(session, context.keeper)
        return probeLostSession(session, context.keeper)
      }
      if (session.marker === null) return true
      // The channel is open; the remote /proc confirms (or cannot tell: then the open channel is the evidence).
      const answer = await probeRemotePid(session.connection, session.marker, SSH_SIDE_COMMAND_TIMEOUT_MS)
      // Re-read: the exit may have crossed the wire while the side channel ran.
      const state = session.state as SshPtyState
      if (state === 'exited') return false
      if (state === 'lost') return null
      // Proven gone remotely, but its exit is still on the way: not proven here yet, so unknown.
      return answer === false ? null : true
    },
    async getCwd(id: string, options?: PtyCwdOptions): Promise<string | null> {
      // One remote read answers both: the leader's directory (`{ of: 'leader' }`, the shell's,
      // whatever runs in the foreground) or the foreground process's (the default).
      const inspection = await inspect(id)
      return (options?.of === 'leader' ? inspection?.leaderCwd : inspection?.cwd) ?? null
    },
    async getForegroundProcess(id: string): Promise<string | null> {
      return (await inspect(id))?.foreground ?? null
    },
    async hasChildProcesses(id: string): Promise<boolean | null> {
      return (await inspect(id))?.hasChildren ?? null
    },
    getPid(id: string): number | null {
      return table.live(id)?.marker?.pid ?? null
    },
  }
}
