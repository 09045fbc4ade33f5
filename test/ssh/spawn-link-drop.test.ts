import { existsSync, mkdtempSync, chmodSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isPtySpawnError, type PtySpawnError } from 'ptykit/spawn'
import { isSshProviderError, type SshProviderOptions } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, providerThroughProxy, spawnWithLinkLost, useSshd } from './ssh-test-support.js'

// Found by an audit (helper-120): a link that dies while a spawn is in flight, after the server
// ran the program. The spawn's verdict must not say `not_started`, and the program (one that
// ignores the hang-up its terminal gets) must not be left running with nothing to reach it.
const sshd = useSshd()
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Live processes on this machine (the loopback server's) whose environment holds `PTYKIT_LINK_TAG=tag`. */
function tagged(tag: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(`\0PTYKIT_LINK_TAG=${tag}\0`) && isAlive(Number(name))) found.push(Number(name))
    } catch {
      // Gone meanwhile.
    }
  }
  return found
}

/** A provider and controller through a fresh proxy, connected (side shell warm) and idle. */
const throughProxy = (extra: Partial<SshProviderOptions> = {}) => providerThroughProxy(sshd(), cleanups, extra)

/** A program that ignores the hang-up, touches `mark` once it runs, then sleeps; tagged `tag`. */
function hangupProofProgram(tag: string, mark: string) {
  return { hostId: 'ssh:loopback', file: '/bin/sh', args: ['-c', `trap '' HUP; touch '${mark}'; exec sleep 300`], env: { PTYKIT_LINK_TAG: tag } }
}

function markFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ptykit-link-drop-'))
  // The program runs as the test user.
  chmodSync(dir, 0o777)
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return path.join(dir, 'ran')
}

/**
 * A spawn of a hang-up-proof program through a fresh proxy whose link drops once the program ran
 * and `serverChunksToPass` chunks of the server's replies passed (see `spawnWithLinkLost`). The
 * proxy counts TCP chunks, not SSH packets: on a loaded machine sshd can send its exec reply and
 * the launch marker in one chunk, and the spawn then sees its marker — the moment under test never
 * came. Such an attempt's program is killed and the scenario starts over on a fresh link (at most
 * three attempts; the last one's result is returned as it is, so a spawn that keeps succeeding
 * still fails the test's assertions).
 */
async function spawnAbandonedByLinkLoss(serverChunksToPass: number, extra: Partial<SshProviderOptions> = {}) {
  for (let attempt = 1; ; attempt++) {
    const tag = `${process.pid}-${Date.now()}-${serverChunksToPass}-${attempt}`
    cleanups.push(() => {
      for (const pid of tagged(tag)) process.kill(pid, 'SIGKILL')
    })
    const { proxy, controller } = await throughProxy(extra)
    const mark = markFile()
    const failure = await spawnWithLinkLost(proxy, controller, hangupProofProgram(tag, mark), () => existsSync(mark), serverChunksToPass)
    if (failure !== null || attempt === 3) return { tag, controller, failure }
    for (const pid of tagged(tag)) process.kill(pid, 'SIGKILL')
  }
}

describe('SSH: the link drops while a spawn is in flight, after the server ran the program', () => {
  it.each([
    // The exec request reached the server (the program ran), its reply went down with the link.
    ['its exec reply is lost', 0],
    // The exec reply arrived (the channel opened), the launch marker went down with the link.
    ['its launch marker is lost', 1],
  ] as const)('%s: the spawn fails with outcome unknown, and the program is found and stopped once a connection is open again', async (_moment, serverChunksToPass) => {
    // No background reconnect: the next spawn opens the connection on which the program is found.
    // The spawn's channel open, pty request and exec request go through; the server's replies
    // after the exec request (or after its reply) never reach the client.
    const { tag, controller, failure } = await spawnAbandonedByLinkLoss(serverChunksToPass, { reconnectMaxAttempts: 0 })
    expect(isPtySpawnError(failure) && failure.code, String(failure)).toBe('provider_spawn_failed')
    const cause = (failure as PtySpawnError).cause
    expect(isSshProviderError(cause) && cause.code).toBe('transport_lost')
    expect(cause).toMatchObject({ processMayExist: true })
    // Which way the spawn failed: its channel's exec never confirmed, or its marker never seen.
    expect((cause as Error).message).toContain(serverChunksToPass === 0 ? 'after the command was sent' : 'Could not start "/bin/sh"')
    // Before: `not_started` when the exec reply was lost, though the program ran.
    expect((failure as PtySpawnError).outcome).toBe('unknown')
    // It ignores the hang-up: it outlived its session's end.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(tagged(tag)).toHaveLength(1)
    // A connection opens again (this spawn's): the program is found by its launch's nonce and
    // stopped. Before: nothing looked for it — it outlived the controller's and provider's disposal.
    const { id } = await controller.spawn({ hostId: 'ssh:loopback', file: '/bin/sleep', args: ['300'] })
    await waitFor(() => (tagged(tag).length === 0 ? true : undefined), 'the abandoned launch stopped', 10_000)
    expect(controller.hasPty(id)).toBe(true)
  }, 40_000)

  it('a launch abandoned while no connection is open is stopped by the background reconnect', async () => {
    const { tag, failure } = await spawnAbandonedByLinkLoss(1)
    expect((failure as PtySpawnError).outcome).toBe('unknown')
    await waitFor(() => (tagged(tag).length === 0 ? true : undefined), 'the abandoned launch stopped after the reconnect', 15_000)
  }, 40_000)
})
