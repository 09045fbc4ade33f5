/**
 * A provider detached before the controller that uses it (the pty host's `detach()`: its sessions
 * run on in the host): every stop, verification and listing the controller makes for its PTYs is
 * refused `provider_detached`. Before, each refusal was reported on `error` — a
 * `controller.dispose()` over 300 detached PTYs emitted 600 `shutdown_failed`, and each late call
 * one more — where a disposed provider is reported once. Now once per provider too; and unlike a
 * disposed provider (which stops its PTYs and reports their exits), a detached one reports no exit,
 * so a stop refused so answers `false` at the refusal, never after its whole budget.
 * Real sessions at scale: test/pty-host/detach-at-scale.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createHarness } from './controller-harness.js'

const PTYS = 19

/** What the pty host provider rejects a stop or a listing with once detached. */
class ProviderDetachedError extends Error {
  readonly code = 'provider_detached'
}

describe('a provider detached before the controller that uses it', () => {
  it('late stops answer false at once (the clock never moves), each PTY stop_unverified, the detach reported once', async () => {
    const h = createHarness()
    const ids: string[] = []
    for (let index = 0; index < PTYS; index++) ids.push((await h.run(h.controller.spawn({}))).id)
    // Detached: every stop and listing refused.
    h.provider.shutdown = (id) => Promise.reject(new ProviderDetachedError(`Cannot call \`shutdown\`: detached (${id})`))
    h.provider.setListingFailure(new ProviderDetachedError('Cannot call `listProcesses`: detached'))
    const startedAt = h.clock.now()
    const answers: (boolean | undefined)[] = ids.map(() => undefined)
    const stops = ids.slice(0, 10).map((id, index) => h.controller.stopAndWait(id, { timeoutMs: 600_000 }).then((answer) => (answers[index] = answer)))
    for (const id of ids.slice(10)) expect(h.controller.kill(id)).toBe(true)
    for (let turn = 0; turn < 20; turn++) await h.settle()
    expect(h.clock.now()).toBe(startedAt)
    expect(answers.slice(0, 10)).toEqual(ids.slice(0, 10).map(() => false))
    await Promise.all(stops)
    await expect(h.controller.listProcesses()).rejects.toMatchObject({ code: 'listing_failed' })
    await h.run(h.controller.dispose())
    // The kills' PTYs are published at the refusal (before the stops' answers are awaited).
    expect(h.exits().map((exit) => [exit.ptyId, exit.cause]).sort()).toEqual(ids.map((id) => [id, { kind: 'unknown', reason: 'stop_unverified' }]).sort())
    expect(h.errors().map((error) => [error.code, (error.cause as { code?: string }).code])).toEqual([['shutdown_failed', 'provider_detached']])
    expect(h.errors()[0]!.message).toMatch(/was detached/)
  })
})
