/**
 * One controller over a fresh provider of each bundled kind — the fake, node-pty, the pty host (a
 * host started for the file) and SSH (OpenSSH on loopback) — for the cross-provider matrices
 * (test/cross-provider-verdicts.test.ts, test/cross-provider-refusals.test.ts): built before the
 * file's tests, disposed of after them.
 */
import { afterAll, beforeAll } from 'vitest'
import { createPtyController, type PtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { PtyProvider } from 'ptykit/contracts'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createPtyHostProvider, startPtyHost, type PtyHostServer } from 'ptykit/pty-host'
import { createSshProvider } from 'ptykit/ssh'
import { createFakePtyProvider } from 'ptykit/testing'
import { killHostAndClean, makeSocketDir } from '../pty-host/pty-host-test-support.js'
import type { SshdFixture } from '../ssh/sshd-fixture.js'
import { sshOptions } from '../ssh/ssh-test-support.js'

/** A provider kind of the matrices. */
export type ProviderBenchKind = 'fake' | 'node-pty' | 'pty host' | 'ssh'

/** A controller over one provider, with the exits it published. */
export type ProviderBench = { provider: PtyProvider; controller: PtyController; hostId: string; exits: PtyControllerExitEvent[] }

/**
 * A {@link ProviderBench} of `kind`, made in the file's `beforeAll` (`graces`: the stop graces of
 * the node-pty, pty host and SSH providers; `extend`: more of the bench, e.g. listeners of its
 * own), disposed of in its `afterAll`; the returned function reads it inside a test.
 */
export function useProviderBench<Extra extends object = object>(
  kind: ProviderBenchKind,
  sshd: () => SshdFixture,
  options: { graces?: { hangupGraceMs: number; terminateGraceMs: number }; extend?: (bench: ProviderBench) => Extra } = {},
): () => ProviderBench & Extra {
  let bench: (ProviderBench & Extra) | undefined
  let host: PtyHostServer | undefined
  const dir = makeSocketDir()
  const graces = options.graces ?? {}
  beforeAll(async () => {
    let provider: PtyProvider
    if (kind === 'fake') provider = createFakePtyProvider()
    else if (kind === 'node-pty') provider = createNodePtyProvider(graces)
    else if (kind === 'pty host') {
      host = await startPtyHost({ socketPath: dir.socketPath, idleExitMs: 60_000, nodePty: graces })
      provider = createPtyHostProvider({ socketPath: dir.socketPath, autoStart: false })
    } else provider = createSshProvider(sshOptions(sshd(), undefined, graces))
    const hostId = kind === 'ssh' ? 'ssh:loopback' : 'local'
    const controller = createPtyController({ providers: { [hostId]: provider } })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const made: ProviderBench = { provider, controller, hostId, exits }
    bench = Object.assign(made, options.extend?.(made) ?? ({} as Extra))
  }, 30_000)
  afterAll(async () => {
    await bench?.controller.dispose()
    await bench?.provider.dispose?.()
    await host?.close()
    await killHostAndClean(dir.socketPath, dir.dir)
  }, 30_000)
  return () => bench!
}
