/**
 * `dispose()` of a pty host provider while a stop of one of its PTYs is still running on the host,
 * though the PTY's exit (its leader's) already came: the leader dies of the hang-up, a member of
 * its session ignores HUP and TERM and is still being stopped. Before, `dispose()` left that PTY
 * out of its stops (it had exited) and closed the connection: the stop in flight was refused
 * `provider_disposed` while the member ran on, and a controller's `stopAndWait` of it — reading
 * that refusal, with the exit reported, as the disposal's stop done — answered `true` while the
 * member lived. Now the dispose stops such a PTY too (at once) and waits for the host's answers:
 * the stop in flight gets its own (resolved: the session is gone), and `true` is true.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPtyController } from 'ptykit/controller'
import type { PtyExitEvent } from 'ptykit/contracts'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host provider dispose() with a stop in flight of a PTY whose exit came', () => {
  it('stops the rest of its session and lets the stop in flight answer: no refusal, no true while a member lives', async () => {
    const { socketPath, dir } = await inProcessHost(cleanups)
    const provider = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => provider.dispose())
    const controller = createPtyController({ provider })
    cleanups.push(() => controller.dispose())
    const memberFile = join(dir, 'member')
    // The leader waits (and dies of the hang-up); the member of its session ignores HUP and TERM.
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', `sh -c "trap '' HUP TERM; echo \\$\\$ > ${memberFile}; exec sleep 600" & wait`] })
    const member = Number(await waitFor(() => (existsSync(memberFile) ? readFileSync(memberFile, 'utf8').trim() || undefined : undefined), 'the member to be up'))
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    // A caller's own stop (no controller) and a controller's, each with a budget far longer than the test.
    const direct = provider.shutdown(id, { timeoutMs: 60_000 }).then(
      () => 'resolved',
      (error: { code?: string }) => `refused ${error.code}`,
    )
    const stopped = controller.stopAndWait(id, { timeoutMs: 60_000 })
    await waitFor(() => exits[0], "the leader's exit")
    expect(exits[0]).toMatchObject({ id, cause: { kind: 'signaled', signal: 1 } })
    // The hang-up ended the leader, not the stop: the member runs on.
    expect(isDead(member)).toBe(false)
    await provider.dispose()
    // Nothing the dispose could stop outlives it.
    expect(isDead(member)).toBe(true)
    expect(await direct).toBe('resolved')
    await expect(stopped).resolves.toBe(true)
  }, 30_000)
})
