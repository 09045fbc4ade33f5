/**
 * `controller.kill(id)` of PTYs whose provider is being disposed (the app quitting: the provider
 * disposed first, a late kill per tab after), on a machine too loaded for the disposal's hang-up
 * to be seen done in time — played with `shutdownDeadlineMs: 30`. Each kill's shutdown joins the
 * disposal's stop of its PTY and rejects `shutdown_timeout` ("could not be stopped by its
 * deadline"), then the disposal's SIGKILL ends the process a moment later. That is one stop that
 * landed: one exit, `operator_close`, and no `shutdown_failed`. (Before: per PTY a `shutdown_failed`
 * report and an immediate `stop_unverified` exit, then a second exit, `operator_close`.)
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { describe, expect, it } from 'vitest'
import { expectNoChildLeftBehind, waitFor } from './pty-test-support.js'

const PTYS = 40

let provider: NodePtyProvider | undefined

expectNoChildLeftBehind(async () => {
  await provider?.dispose()
})

describe('kill while the node-pty provider is being disposed, its stops running out of time', () => {
  it('publishes one operator_close exit per PTY and reports no shutdown_failed', async () => {
    provider = createNodePtyProvider({ shutdownDeadlineMs: 30 })
    const controller = createPtyController({ provider })
    const errors: string[] = []
    const exits = new Map<string, PtyControllerExitEvent[]>()
    controller.on('error', (error) => errors.push(`${error.code} ${error.ptyId ?? ''} ${error.message}`))
    controller.on('exit', (exit) => exits.set(exit.ptyId, [...(exits.get(exit.ptyId) ?? []), exit]))
    try {
      const ids: string[] = []
      for (let i = 0; i < PTYS; i++) {
        const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; while :; do sleep 0.05; done"] })
        ids.push(id)
      }
      await sleep(300)
      const disposing = provider.dispose()
      for (const id of ids) expect(controller.kill(id)).toBe(true)
      await disposing
      await waitFor(() => (ids.every((id) => exits.get(id)?.some((exit) => exit.cause.kind === 'operator_close')) ? true : undefined), 'every PTY closed', 20_000)
      // The held reports would come at the unconfirmed window's end: nothing may come after the exits either.
      await sleep(200)
      expect(errors).toEqual([])
      for (const id of ids) expect(exits.get(id)?.map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
    } finally {
      await controller.dispose({ stopPtys: false })
      await provider.dispose()
    }
  }, 60_000)
})
