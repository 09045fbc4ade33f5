/**
 * The host's startup / shutdown / connect sequence under concurrency: an app that asks for a host
 * while another host is starting or closing must end connected (to whichever host serves the
 * socket), never with a failed spawn.
 */
import { existsSync, rmSync } from 'node:fs'
import type { PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { hostPid, isAlive, killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

function provider(socketPath: string, extra: Parameters<typeof providerOn>[1] = {}): PtyHostProvider {
  const made = providerOn(socketPath, extra)
  cleanups.push(() => made.detach())
  return made
}

/** A program that ignores the hang-up and SIGTERM: stopping it takes the stop's full graces. */
const STUBBORN = { file: 'sh', args: ['-c', "trap '' HUP TERM; echo ready; while :; do sleep 0.05; done"] }

describe('pty host: an app that starts a host while the previous one is closing', () => {
  it('connects to a host once the closing one is gone, instead of failing the spawn', async () => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const first = provider(socketPath)
    await first.spawn(STUBBORN)
    const oldPid = hostPid(socketPath)!
    first.detach()
    // The host closes (SIGTERM, as at logout): it stops listening at once, then stops its sessions
    // (a second for this one) and only then removes its lock and exits.
    process.kill(oldPid, 'SIGTERM')
    await waitFor(() => (existsSync(socketPath) ? undefined : true), 'the closing host to stop listening')
    expect(isAlive(oldPid)).toBe(true)
    expect(hostPid(socketPath)).toBe(oldPid)
    const started = Date.now()
    const app = provider(socketPath, { connectTimeoutMs: 4_000 })
    const outcome = await app.spawn({ file: 'cat' }).then(
      (result) => ({ ok: true as const, id: result.id }),
      (error: unknown) => ({ ok: false as const, error: String(error), afterMs: Date.now() - started, oldHostGone: !isAlive(oldPid) }),
    )
    expect(outcome).toEqual({ ok: true, id: expect.any(String) })
    expect(hostPid(socketPath)).not.toBe(oldPid)
  }, 20_000)
})

describe('pty host: a host the app started that fails before it listens', () => {
  it.each([
    ['exits with a failure code', 'echo boom >&2; exit 7', 'exit code 7'],
    ['is killed by a signal', 'kill -KILL $$', 'signal SIGKILL'],
  ])('%s: the spawn fails at once, host_unavailable naming the command and how it ended — not after connectTimeoutMs', async (_label, script, ended) => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    // A connect timeout far beyond the test's: before, the spawn polled the socket until then and
    // failed "No pty host listens on …", naming neither the command nor its exit.
    const app = provider(socketPath, { hostCommand: { file: '/bin/sh', args: ['-c', script, 'failing-host'] }, connectTimeoutMs: 600_000 })
    const refused = await app.spawn({ file: 'cat' }).catch((error: unknown) => error)
    expect(refused).toMatchObject({ code: 'host_unavailable' })
    const { message } = refused as Error
    expect(message).toContain(`ended (${ended}) before it listened`)
    expect(message).toContain(`/bin/sh -c '${script}' failing-host --socket ${socketPath}`)
  })
})
