/**
 * helper-131: a host whose own default stop deadline is longer than 5 s (`startPtyHost({ nodePty:
 * { shutdownDeadlineMs, ... } })`), and a stop that names no budget (`controller.kill`,
 * `provider.dispose`, a plain `provider.shutdown`): the provider gave up at 5 s + requestTimeoutMs
 * while the host was still carrying out its graceful stop, and the controller reported
 * `shutdown_failed` / `stop_unverified` for a stop that succeeded.
 */
import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { inProcessHost, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host provider: a stop without a budget on a host with a longer default (helper-131)', () => {
  it("waits for the host's own default stop deadline, not 5 s", async () => {
    const { socketPath } = await inProcessHost(cleanups, { nodePty: { hangupGraceMs: 3_000, terminateGraceMs: 3_000, shutdownDeadlineMs: 12_000 } })
    const app = createPtyHostProvider({ socketPath, autoStart: false, requestTimeoutMs: 500 })
    cleanups.push(() => app.dispose().catch(() => undefined))
    // Ignores HUP and TERM: the host's stop KILLs it at 6 s (its graces), well within its 12 s.
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP TERM; while :; do sleep 0.1; done"] })
    let exited = false
    app.onExit((event) => {
      if (event.id === id) exited = true
    })
    const outcome = await app.shutdown(id).then(
      () => 'resolved',
      (error: unknown) => error,
    )
    expect(outcome).toBe('resolved')
    expect(exited).toBe(true)
  }, 20_000)
})
