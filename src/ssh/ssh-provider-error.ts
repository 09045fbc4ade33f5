import { defineErrorBrand } from '../contracts/error-brand.js'

/**
 * Stable codes of {@link SshProviderError}. Match on the code, never on the message.
 *
 * - `ssh2_unavailable`: the optional peer dependency `ssh2` could not be loaded;
 * - `host_key_unknown`: the server's host key is not in the known_hosts file (nor accepted by
 *   `hostVerifier`), and trust on first use was not asked for; `fingerprint` names the key;
 * - `host_key_changed`: known_hosts lists another key for this host (possible impersonation);
 * - `host_key_rejected`: the `hostVerifier` callback refused the key;
 * - `auth_failed`: the server refused every offered credential;
 * - `connect_timeout`: no TCP connection within `connectTimeoutMs`;
 * - `handshake_timeout`: the SSH handshake and authentication did not finish within `handshakeTimeoutMs`;
 * - `connection_failed`: any other failure to reach the server (refused, reset, DNS, closed before
 *   its banner: sshd past `MaxStartups`, which the message names), or `ssh2`
 *   not loaded because the process had no descriptors to spare (EMFILE, ENFILE; the next use
 *   loads it);
 * - `transport_lost`: the connection dropped, or the PTY's channel closed without an exit status
 *   (the message says how the PTY was lost; its fate is unknown: liveness `unverifiable`) — a stop
 *   refused so is owed, carried out once a connection that can reach it is open;
 * - `pty_absent`: an attach-only spawn named a PTY this provider does not hold live;
 * - `pty_id_in_use`: a spawn asked to create a session under an id that is still live, or under
 *   which another spawn is still starting (its channel opening);
 * - `pty_live_other_incarnation`: an attach-only spawn expected an incarnation, and another
 *   incarnation of the id is live (not an absence: nothing may be started in its place);
 * - `spawn_failed`: the server refused the channel, the pty or the command, or the command could
 *   not start (missing `cwd`, a program that exits before its preamble ran), or the spawn did not
 *   complete within `launchTimeoutMs` of the call (`processMayExist` once its channel's open went out);
 * - `shutdown_timeout`: the remote process was still alive (or not yet seen gone) at the
 *   shutdown's deadline — a stop that gave up so with its program not seen gone is owed, as after
 *   `transport_lost`;
 * - `provider_disposed`: the provider was used after `dispose()` (every call but `dispose`,
 *   `isConnected` and the subscriptions once it resolved; a spawn, a listing and a stop of a lost
 *   PTY not proven gone from its call on), or disposed while a spawn was in
 *   flight (the disposal stops what that spawn started; `processMayExist` when its end was not
 *   reported).
 */
export type SshProviderErrorCode =
  | 'ssh2_unavailable'
  | 'host_key_unknown'
  | 'host_key_changed'
  | 'host_key_rejected'
  | 'auth_failed'
  | 'connect_timeout'
  | 'handshake_timeout'
  | 'connection_failed'
  | 'transport_lost'
  | 'pty_absent'
  | 'pty_live_other_incarnation'
  | 'pty_id_in_use'
  | 'spawn_failed'
  | 'shutdown_timeout'
  | 'provider_disposed'

/**
 * The typed error the SSH provider rejects with. Messages name the host, port, user and (for host
 * key errors) the `SHA256:` fingerprint — never a key, passphrase or agent socket content.
 */
export class SshProviderError extends Error {
  /** The stable code. */
  readonly code: SshProviderErrorCode
  /** The PTY id involved, when there is one. */
  readonly ptyId: string | undefined
  /** For host key errors: the server key's `SHA256:…` fingerprint (as `ssh-keygen -l` prints it). */
  readonly fingerprint: string | undefined
  /**
   * For a spawn: `true` when the program may run on the server though the spawn failed — its start
   * was not seen within `launchTimeoutMs` (or the connection dropped first, or the provider was
   * disposed while it started: `provider_disposed`), and the server did not report its end after
   * the provider stopped it; or its channel's open went out and was still unanswered at the
   * launch timeout (the server may run it once the link carries the request). A controller's spawn then fails with outcome `unknown`, never
   * `not_started`.
   */
  readonly processMayExist: boolean
  /**
   * For a spawn: `true` when its launch ran on the server (its channel opened) before the spawn
   * failed, and the provider stopped it — with `processMayExist` `false`, its end was reported: a
   * controller's spawn then fails with outcome `rolled_back`, never `not_started`.
   */
  readonly processStarted: boolean

  /** Create the error. */
  constructor(
    code: SshProviderErrorCode,
    message: string,
    options: { cause?: unknown; ptyId?: string | undefined; fingerprint?: string | undefined; processMayExist?: boolean; processStarted?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.ptyId = options.ptyId
    this.fingerprint = options.fingerprint
    this.processMayExist = options.processMayExist === true
    this.processStarted = options.processStarted === true
    SSH_PROVIDER_ERROR_BRAND.mark(this)
  }
}
const SSH_PROVIDER_ERROR_BRAND = defineErrorBrand(SshProviderError, 'SshProviderError')

/** True for an {@link SshProviderError}, also across duplicate copies of the package. */
export function isSshProviderError(value: unknown): value is SshProviderError {
  return SSH_PROVIDER_ERROR_BRAND.is(value)
}
