/**
 * The seed's `keepHistory`, end to end: a controller over the pty host answers `serializeBuffer`
 * of a PTY it stopped with `keepHistory: true` (and of one that ended by itself) with the last
 * screen the host kept; after a stop without it, `null`. Never another process's screen: when
 * another app took the id on the shared host, the ended PTY's snapshot is `null`.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A controller on the host at `socketPath`, with its output by PTY id and its exits. */
function app(socketPath: string): { controller: PtyController; output: Map<string, string>; exited: Set<string> } {
  const controller = createPtyController({ provider: providerDisposedAfter(cleanups, socketPath, { autoStart: false }) })
  cleanups.push(() => controller.dispose())
  const output = new Map<string, string>()
  const exited = new Set<string>()
  controller.on('data', ({ ptyId, data }) => output.set(ptyId, (output.get(ptyId) ?? '') + data))
  controller.on('exit', ({ ptyId }) => exited.add(ptyId))
  return { controller, output, exited }
}

describe('pty host: the snapshot of an ended PTY through a controller', () => {
  it('a stop with keepHistory keeps the last screen; a stop without it does not', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const { controller, output } = app(socketPath)
    const kept = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo KEPT-SCREEN; exec sleep 60'] })
    const dropped = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo DROPPED-SCREEN; exec sleep 60'] })
    for (const [{ id }, text] of [[kept, 'KEPT-SCREEN'], [dropped, 'DROPPED-SCREEN']] as const) {
      await waitFor(() => ((output.get(id) ?? '').includes(text) ? true : undefined), `${text} on the screen`)
    }
    expect(await controller.stopAndWait(kept.id, { keepHistory: true })).toBe(true)
    expect(await controller.stopAndWait(dropped.id)).toBe(true)
    expect(controller.hasPty(kept.id)).toBe(false)

    const snapshot = await controller.serializeProviderBuffer(kept.id)
    expect(snapshot).toMatchObject({ incarnationId: kept.incarnationId, source: 'headless' })
    expect(snapshot?.data).toContain('KEPT-SCREEN')
    expect((await controller.serializeBuffer(kept.id))?.data).toContain('KEPT-SCREEN')
    expect(await controller.serializeProviderBuffer(dropped.id)).toBeNull()
    expect(await controller.serializeBuffer(dropped.id)).toBeNull()
  })

  it('a PTY that ended by itself keeps its last screen', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const { controller, exited } = app(socketPath)
    const { id } = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo LAST-WORDS'] })
    await waitFor(() => (exited.has(id) ? true : undefined), 'the exit')
    expect((await controller.serializeBuffer(id))?.data).toContain('LAST-WORDS')
  })

  it("is null once another app's process holds the id on the shared host", async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const first = app(socketPath)
    const { id } = await first.controller.spawn({ file: '/bin/sh', args: ['-c', 'echo FIRST-APP'], sessionId: 'shared-id' })
    await waitFor(() => (first.exited.has(id) ? true : undefined), 'the first exit')
    expect((await first.controller.serializeBuffer(id))?.data).toContain('FIRST-APP')

    const second = app(socketPath)
    await second.controller.spawn({ file: '/bin/sh', args: ['-c', 'echo SECOND-APP; exec sleep 60'], sessionId: 'shared-id' })
    await waitFor(() => ((second.output.get(id) ?? '').includes('SECOND-APP') ? true : undefined), "the second app's output")
    // The host answers for the id with the second app's live screen: not the first app's PTY.
    expect(await first.controller.serializeProviderBuffer(id)).toBeNull()
    expect((await second.controller.serializeBuffer(id))?.data).toContain('SECOND-APP')
  })
})
