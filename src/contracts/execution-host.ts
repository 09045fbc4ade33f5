/**
 * Which host runs a PTY: `'local'` for this machine, or any string a host application registers a
 * provider under (`'ssh:build-box'`, `'container:ci'`, `'daemon'`). The controller routes every
 * call for a PTY to the provider registered under its host id.
 */
export type ExecutionHostId = 'local' | (string & {})

/** The host id of PTYs on this machine, and the default when a spawn names no host. */
export const LOCAL_EXECUTION_HOST_ID: ExecutionHostId = 'local'
