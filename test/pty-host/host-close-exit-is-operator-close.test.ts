/**
 * The exit an app receives of a session its pty host's close killed: a program that ignores the
 * hang-up and SIGTERM, on a host whose stop deadline (`nodePty.shutdownDeadlineMs: 0`) passes before
 * its node-pty provider's stop sends its SIGKILL.
 *
 * Until 7 Dec the close SIGKILLed what the provider's disposal left itself; the provider, whose own
 * SIGKILL had not gone out, read that death as another's kill (`diedBeforeStopRequest`), and the
 * host stripped the flag from the exit again (a set of the sessions the close had killed). Now the
 * provider's `dispose()` kills what its stops left at the deadline, as its own stop, and the host
 * passes the exit on as the provider reported it: the app hears the operator close it was
 * (`stopRequestedBeforeDeath`, settled `operator_close`), never the program's own death.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import type { PtyExitEvent } from 'ptykit/contracts'
import { describe, expect, it } from 'vitest'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, killSessionMembers, providerOn, sessionMembers, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('a pty host closed while a session ignores the hang-up and SIGTERM (stop deadline 0)', () => {
  it('sends its apps the operator close, not a death by another’s SIGKILL', async () => {
    const { host, dir, socketPath } = await inProcessHost(cleanups, { nodePty: { shutdownDeadlineMs: 0 } })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    const heard: PtyExitEvent[] = []
    app.onExit((event) => heard.push(event))
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const pidFile = join(dir, 'pid')
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', `trap '' HUP TERM; echo $$ > ${pidFile}; while :; do sleep 1; done`] })
    const leader = Number(await waitFor(() => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() || undefined : undefined), 'the program to be up'))
    cleanups.push(async () => {
      killSessionMembers(leader)
    })
    await waitFor(() => (sessionMembers(leader).length >= 2 ? true : undefined), 'the loop to run its sleep')
    await host.close()
    // The close sent the exit before it ended the connection.
    const exit = await waitFor(() => heard.find((event) => event.id === id), 'the exit the app receives', 5_000)
    expect(exit).toMatchObject({ id, cause: { kind: 'signaled', signal: 9 }, stopRequestedBeforeDeath: true })
    expect(exit).not.toHaveProperty('diedBeforeStopRequest')
    const published = await waitFor(() => exits.find((event) => event.ptyId === id), 'the controller’s exit', 5_000)
    expect(published.cause).toEqual({ kind: 'operator_close' })
    // And nothing of the session is left.
    await waitFor(() => (sessionMembers(leader).length === 0 && isDead(leader) ? true : undefined), 'the session to be gone', 5_000)
  }, 30_000)
})
