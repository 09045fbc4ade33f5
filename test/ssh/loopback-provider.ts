// The setup six SSH test files built by hand: a throwaway loopback sshd (with a channel timeout,
// a session limit … as the test needs), one SSH provider on it, the exits it reports, spawns whose
// programs carry the test's tag, a wait for those programs to run, and one close that disposes the
// provider, kills what the programs left and stops the server.
import type { PtyExitEvent, PtySpawnResult } from 'ptykit'
import { createSshProvider, type SshProvider, type SshProviderOptions } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { startSshd, type SshdFixture, type SshdOptions } from './sshd-fixture.js'
import { killTagged, sshOptions, taggedProcesses } from './ssh-test-support.js'

/** A loopback sshd, one SSH provider on it, and what a test needs around them. */
export type LoopbackProvider = {
  server: SshdFixture
  provider: SshProvider
  /** Every exit the provider reported, in order. */
  exits: PtyExitEvent[]
  /** Spawn `/bin/sh -c script`, its processes tagged (found by {@link taggedProcesses}, killed at close). */
  spawnTagged(script: string): Promise<PtySpawnResult>
  /** Wait until `count` tagged programs run as `sleep` (past the shell and its traps). */
  waitForSleeps(count: number, what?: string): Promise<void>
  /** Dispose the provider (again, if the test did), kill the tagged programs left, stop the server. */
  close(): Promise<void>
}

/**
 * Start a loopback sshd with `sshd` options and an SSH provider on it (`provider`: options on top
 * of {@link sshOptions}). The test's `try` ends in `finally { await loopback.close() }`.
 */
export async function loopbackProvider(
  tag: string,
  options: { sshd?: SshdOptions; provider?: { [K in keyof SshProviderOptions]?: SshProviderOptions[K] | undefined } } = {},
): Promise<LoopbackProvider> {
  const server = await startSshd(options.sshd)
  let provider: SshProvider
  try {
    provider = createSshProvider(sshOptions(server, undefined, options.provider))
  } catch (error) {
    await server.stop()
    throw error
  }
  const exits: PtyExitEvent[] = []
  provider.onExit((event) => exits.push(event))
  return {
    server,
    provider,
    exits,
    spawnTagged: (script) => provider.spawn({ file: '/bin/sh', args: ['-c', script], env: { PTYKIT_SWEEP_TAG: tag } }),
    waitForSleeps: async (count, what = count === 1 ? 'the program to run' : `the ${count} programs to run`) => {
      await waitFor(() => (taggedProcesses(tag).filter(({ comm }) => comm === 'sleep').length === count ? true : undefined), `${what} (as sleep)`)
    },
    close: async () => {
      await provider.dispose()
      killTagged(tag)
      await server.stop()
    },
  }
}
