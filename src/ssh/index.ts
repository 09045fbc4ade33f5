/**
 * `ptykit/ssh`: PTYs on other machines over SSH.
 *
 * `createSshProvider(options)` returns a `PtyProvider` over one SSH connection, built on the
 * pure-JS client `ssh2` (an optional peer dependency, loaded on first use). Host keys are always
 * verified; exits keep their cause across the wire (`exit-status`, `exit-signal`); a dropped link
 * is never an exit; stops escalate HUP → TERM → KILL and are verified, with a side-channel
 * fallback for servers that ignore signal requests. See `docs/ssh-provider.md`.
 *
 * @packageDocumentation
 */
export { createSshProvider, type SshProvider } from './ssh-provider.js'
export {
  SSH_DEFAULT_CONNECT_TIMEOUT_MS,
  SSH_DEFAULT_HANDSHAKE_TIMEOUT_MS,
  SSH_DEFAULT_KEEPALIVE_COUNT_MAX,
  SSH_DEFAULT_KEEPALIVE_INTERVAL_MS,
  SSH_DEFAULT_LAUNCH_TIMEOUT_MS,
  SSH_DEFAULT_TERMINAL_NAME,
  SSH_RECONNECT_MAX_ATTEMPTS,
  type SshProviderOptions,
} from './ssh-provider-options.js'
export { SshOptionError, isSshOptionError } from './ssh-option-error.js'
export { SshProviderError, isSshProviderError, type SshProviderErrorCode } from './ssh-provider-error.js'
export {
  knownHostsName,
  lookUpKnownHosts,
  sshKeyFingerprint,
  sshKeyType,
  type KnownHostsVerdict,
  type SshHostKeyInfo,
  type SshHostKeyPolicy,
  type SshHostVerifier,
} from './host-key-verification.js'
export {
  SSH_HANGUP_GRACE_MS,
  SSH_SHUTDOWN_DEADLINE_MS,
  SSH_TERMINATE_GRACE_MS,
} from './ssh-stop.js'
export {
  SSH_DEFAULT_COLS,
  SSH_DEFAULT_ROWS,
  SSH_LAUNCH_NONCE_VARIABLE,
} from './remote-launch.js'
export { SSH_LOST_RECHECK_DELAY_MS, SSH_LOST_RECHECK_MAX_DELAY_MS } from './ssh-lost-sessions.js'
export { SSH2_PACKAGE_NAME } from './ssh2-module.js'
