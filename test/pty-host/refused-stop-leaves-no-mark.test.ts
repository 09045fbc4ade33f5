import { describe, expect, it } from 'vitest'
import type { PtyExitEvent } from 'ptykit/contracts'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerOn, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

// A shutdown the host refuses (a `deadlineMs` long past: an app of an older ptykit sends it
// unchecked, or an app whose Date differs from the host's) must change nothing: the host noted
// the stop (stopRequested, dropHistoryAtExit) before its node-pty provider refused it, so the
// process's own later death is reported as a stop's (the controller settles it as an operator
// close) and its history is dropped.
describe('a shutdown the pty host refuses leaves no stop behind', () => {
  it('a later natural exit is still diedBeforeStopRequest', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const exits: PtyExitEvent[] = []
    app.onExit((event) => exits.push(event))
    // It exits on its own once told to, after the refused stop (a line on its terminal: no timing).
    const reply = await app.spawn({ file: '/bin/sh', args: ['-c', 'read line; exit 3'] })
    cleanups.push(() => app.shutdown(reply.id, { immediate: true }).catch(() => undefined))

    const other = await rawClient(socketPath)
    cleanups.push(async () => other.close())
    const answer = await other.request('shutdown', { ptyId: reply.id, deadlineMs: 5_000 })
    expect(answer.ok).toBe(false)
    expect(JSON.stringify(answer.error)).toMatch(/deadlineMs/)
    expect(await app.write(reply.id, 'go\r')).toEqual({ kind: 'accepted' })

    const exit = await waitFor(() => exits.find((event) => event.id === reply.id), 'the exit', 10_000)
    expect(exit.code).toBe(3)
    expect(exit.stopRequestedBeforeDeath).toBeUndefined()
    expect(exit.diedBeforeStopRequest).toBe(true)
  })
})
