import { describe, expect, it } from 'vitest'
import { UNVERIFIED_PROCESS_EXIT_CODE } from 'ptykit'
import { STOP_UNCONFIRMED_AFTER_MS } from 'ptykit/controller'
import { toPtyIncarnationId } from '../../src/contracts/index.js'
import { PTY_LIVENESS_REASONS } from '../../src/controller/index.js'
import { createHarness } from './controller-harness.js'

describe('exit settlement', () => {
  it('settles an exit after kill as operator_close (the fake confirms with SIGHUP, code 0)', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.controller.spawn({})
    expect(h.controller.kill(id)).toBe(true)
    await h.settle()
    expect(h.exits()).toEqual([{ ptyId: id, hostId: 'local', incarnationId, code: 0, cause: { kind: 'operator_close' } }])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'exited' })
    expect(h.controller.hasPty(id)).toBe(false)
  })

  it('publishes unknown/stop_unverified with code -1 when the provider never confirms the stop', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id, incarnationId } = await h.controller.spawn({})
    expect(h.controller.kill(id)).toBe(true)
    await h.settle()
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS - 1)
    expect(h.exits()).toEqual([])
    h.clock.advance(1)
    expect(h.exits()).toEqual([
      { ptyId: id, hostId: 'local', incarnationId, code: UNVERIFIED_PROCESS_EXIT_CODE, cause: { kind: 'unknown', reason: 'stop_unverified' } },
    ])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.stopUnconfirmed })
    // Unverified is not dead: existence is unknown, and the process is still live in the fake.
    expect(h.controller.hasPty(id)).toBeNull()
    expect(h.provider.livePtyIds()).toContain(id)
  })

  it('publishes stop_unverified at once when the shutdown rejects, and keeps ownership for a retry', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const { id } = await h.controller.spawn({})
    expect(h.controller.kill(id)).toBe(true)
    await h.settle()
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    expect(h.errors().map((error) => error.code)).toEqual(['shutdown_failed'])
    // A retry still reaches the PTY; its confirmed exit publishes the real cause (issue 11.9).
    h.provider.setShutdownBehaviour(id, 'confirm')
    expect(h.controller.kill(id)).toBe(true)
    await h.settle()
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }, { kind: 'operator_close' }])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'exited' })
    expect(h.controller.hasPty(id)).toBe(false)
  })

  it('publishes the real cause of a late real exit after stop_unverified, and liveness exited (issue 11.9)', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    h.provider.emitExit(id, { exitCode: 0, signal: 15 })
    expect(h.exits().map((exit) => [exit.code, exit.cause])).toEqual([
      [-1, { kind: 'unknown', reason: 'stop_unverified' }],
      [0, { kind: 'operator_close' }],
    ])
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable', 'exited'])
  })

  it('inside the listener of that late exit the PTY is dead: hasPty false, kill false and nothing sent (before: null, and a stop sent to a dead PTY)', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    const seen: unknown[] = []
    h.controller.on('exit', ({ cause }) => {
      if (cause.kind === 'unknown') return
      seen.push(h.controller.hasPty(id), h.controller.kill(id))
    })
    const shutdowns = h.provider.calls.filter((call) => call.method === 'shutdown').length
    h.provider.emitExit(id, { exitCode: 0, signal: 15 })
    await h.settle()
    expect(seen).toEqual([false, false])
    expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toHaveLength(shutdowns)
    expect(h.liveness().map((event) => event.verdict.kind)).toEqual(['unverifiable', 'exited'])
  })

  it('resolves an exit without cause and code 0 as cause_unreported (a code-only provider)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 0, withoutCause: true })
    expect(h.exits()[0]?.cause).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
    expect(h.exits()[0]?.code).toBe(0)
  })

  it('resolves an exit without cause and a nonzero code as exited', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 3, withoutCause: true })
    expect(h.exits()[0]?.cause).toEqual({ kind: 'exited', exitCode: 3 })
  })

  it('keeps signaled(9) with code 0 when the provider tells the signal', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 0, signal: 9 })
    expect(h.exits()[0]).toMatchObject({ code: 0, cause: { kind: 'signaled', signal: 9 } })
  })

  it('keeps exited(3)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 3 })
    expect(h.exits()[0]).toMatchObject({ code: 3, cause: { kind: 'exited', exitCode: 3 } })
  })

  it('treats a synthetic exit with a negative code as unverifiable, not dead', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: -1, observed: 'synthetic' })
    expect(h.exits()[0]?.cause).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.exitUnconfirmed })
    expect(h.controller.hasPty(id)).toBeNull()
  })

  it('a synthetic exit with a code >= 0 certifies the death, as the seed origin\'s exitCode >= 0', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 3, observed: 'synthetic' })
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'exited' })
    expect(h.controller.hasPty(id)).toBe(false)
  })

  it('a provider-observed exit with a negative code still certifies the death (issue 11.9)', async () => {
    for (const observed of [undefined, 'provider'] as const) {
      const h = createHarness()
      const { id } = await h.controller.spawn({})
      h.provider.emitExit(id, observed === undefined ? { exitCode: -1 } : { exitCode: -1, observed })
      // The cause stays what the algebra says (the code proves no reason) — but the process is dead.
      expect(h.exits()[0]?.cause).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
      expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'exited' })
      expect(h.controller.hasPty(id)).toBe(false)
    }
  })

  it('keeps stop_unverified when a stop was requested (R4: an unconfirmed stop is not a close)', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    h.provider.emitExit(id, { exitCode: -1 })
    expect(h.exits()[0]?.cause).toEqual({ kind: 'unknown', reason: 'stop_unverified' })
  })

  it('ignores an exit of a stale incarnation (R1) and still settles the current one later', async () => {
    const h = createHarness()
    const first = await h.controller.spawn({})
    h.provider.emitExit(first.id, { exitCode: 0, signal: 9 })
    h.provider.scriptNextSpawn({ id: first.id })
    const second = await h.controller.spawn({})
    expect(second.id).toBe(first.id)
    expect(second.incarnationId).not.toBe(first.incarnationId)
    const exitsBefore = h.exits().length
    h.provider.emitExit(first.id, { exitCode: 7, incarnationId: first.incarnationId as ReturnType<typeof toPtyIncarnationId> })
    expect(h.exits()).toHaveLength(exitsBefore)
    expect(h.controller.hasPty(first.id)).toBe(true)
    expect(h.controller.write(first.id, 'x', 'driving')).toBe(true)
    h.provider.emitExit(first.id, { exitCode: 2 })
    expect(h.exits().at(-1)).toEqual({
      ptyId: first.id,
      hostId: 'local',
      incarnationId: second.incarnationId,
      code: 2,
      cause: { kind: 'exited', exitCode: 2 },
    })
  })

  it('never leaks a stop intent to a respawn of the same id', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'shell', shutdown: 'never_confirm' })
    const first = await h.controller.spawn({})
    h.controller.kill(first.id)
    // The old process dies on its own before the controller gives up, then the id is reused.
    h.provider.emitExit(first.id, { exitCode: 0, signal: 15 })
    expect(h.exits().at(-1)?.cause).toEqual({ kind: 'operator_close' })
    h.provider.scriptNextSpawn({ id: 'shell' })
    const second = await h.controller.spawn({})
    h.provider.emitExit(second.id, { exitCode: 0, signal: 9 })
    expect(h.exits().at(-1)).toMatchObject({ incarnationId: second.incarnationId, cause: { kind: 'signaled', signal: 9 } })
  })

  it('does not carry a stop intent over a respawn that replaced a PTY whose exit never came', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ id: 'shell', shutdown: 'never_confirm' })
    await h.controller.spawn({})
    h.controller.kill('shell')
    h.provider.scriptNextSpawn({ id: 'shell' })
    const second = await h.controller.spawn({})
    // The replaced incarnation's unconfirmed-stop timer must not fire at the replacement.
    h.clock.advance(STOP_UNCONFIRMED_AFTER_MS * 2)
    expect(h.exits()).toEqual([])
    h.provider.emitExit('shell', { exitCode: 0, signal: 9 })
    expect(h.exits()).toEqual([
      { ptyId: 'shell', hostId: 'local', incarnationId: second.incarnationId, code: 0, cause: { kind: 'signaled', signal: 9 } },
    ])
  })

  it('resolves every exit of a PTY whose host does not report child status as host_status_unavailable', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ hostReportsChildExitStatus: false })
    const { id } = await h.controller.spawn({})
    // Even a provider that (wrongly) attached a signal is overruled: the spawn said it cannot know.
    h.provider.emitExit(id, { exitCode: 0, signal: 9, hostReportsChildExitStatus: true })
    expect(h.exits()[0]?.cause).toEqual({ kind: 'unknown', reason: 'host_status_unavailable' })
  })

  it('resolves a code-only exit of such a PTY as host_status_unavailable too, and a stop of it as operator_close', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ hostReportsChildExitStatus: false })
    h.provider.scriptNextSpawn({ hostReportsChildExitStatus: false })
    const a = await h.controller.spawn({})
    const b = await h.controller.spawn({})
    h.provider.emitExit(a.id, { exitCode: 0, withoutCause: true })
    h.controller.kill(b.id)
    expect(h.exits().map((exit) => [exit.ptyId, exit.cause])).toEqual([
      [a.id, { kind: 'unknown', reason: 'host_status_unavailable' }],
      [b.id, { kind: 'operator_close' }],
    ])
  })

  it('delivers output that raced the spawn reply right after the spawn event, in order', async () => {
    const h = createHarness({ provider: { scheduling: 'microtask' } })
    h.provider.scriptNextSpawn({ output: ['one', 'two'] })
    const { id } = await h.controller.spawn({})
    await h.settle()
    expect(h.events.map((entry) => entry.type)).toEqual(['spawn', 'data', 'data'])
    expect(h.data().map((event) => [event.data, event.seq])).toEqual([
      ['one', 3],
      ['two', 6],
    ])
    h.provider.emitExit(id, { exitCode: 0, signal: 2 })
    expect(h.events.map((entry) => entry.type)).toEqual(['spawn', 'data', 'data', 'exit', 'liveness'])
  })

  it('rejects a spawn whose exit raced the reply (the runtime fence) and drops its buffered output', async () => {
    const h = createHarness({ provider: { scheduling: 'microtask' } })
    h.provider.scriptNextSpawn({ output: ['one'], exit: { exitCode: 0, signal: 2 } })
    await expect(h.controller.spawn({})).rejects.toMatchObject({ code: 'exited_during_start' })
    await h.settle()
    expect(h.events.filter((entry) => entry.type !== 'error')).toEqual([])
  })

  it('rejects a spawn whose process exited before the reply, and publishes nothing for it', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ output: ['bye'], exitBeforeReply: { exitCode: 1 } })
    await expect(h.controller.spawn({})).rejects.toMatchObject({ code: 'exited_during_start' })
    await h.settle()
    expect(h.events.filter((entry) => entry.type !== 'error')).toEqual([])
  })
})

describe('an exit whose stop the provider attests (stopRequestedBeforeDeath)', () => {
  // A provider whose PTYs outlive the controller (the pty host) can attest that a stop reached it
  // before the death — an earlier run of the app asked, or another app sharing the host did.

  it('a PTY this controller attached and never stopped is an operator close, its death proven', async () => {
    const h = createHarness()
    // Another app (or this app's earlier run) spawned it on the provider's host.
    const spawned = await h.provider.spawn({ sessionId: 'shared' })
    expect(await h.controller.attach('shared')).toBe(true)
    h.provider.emitExit('shared', { exitCode: 0, signal: 1, stopRequestedBeforeDeath: true })
    expect(h.exits()).toEqual([{ ptyId: 'shared', hostId: 'local', incarnationId: spawned.incarnationId, code: 0, cause: { kind: 'operator_close' } }])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'exited' })
    expect(h.controller.hasPty('shared')).toBe(false)
  })

  it('the same for a PTY this controller spawned, whatever the observed cause', async () => {
    for (const exit of [{ exitCode: 0, signal: 9 }, { exitCode: 3 }, { exitCode: 0, withoutCause: true }, { exitCode: 0, hostReportsChildExitStatus: false }]) {
      const h = createHarness()
      const { id } = await h.controller.spawn({})
      h.provider.emitExit(id, { ...exit, stopRequestedBeforeDeath: true })
      expect(h.exits().map((event) => event.cause)).toEqual([{ kind: 'operator_close' }])
    }
  })

  it('an unconfirmed stop stays unknown/stop_unverified, and the process possibly alive', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: UNVERIFIED_PROCESS_EXIT_CODE, observed: 'synthetic', stopRequestedBeforeDeath: true })
    expect(h.exits().map((event) => event.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'unverifiable', reason: PTY_LIVENESS_REASONS.exitUnconfirmed })
    expect(h.controller.hasPty(id)).toBeNull()
  })

  it('a death before the stop request keeps its real cause: diedBeforeStopRequest wins', async () => {
    const h = createHarness({ controller: { flowControl: { mode: 'always' } } })
    const { id } = await h.controller.spawn({})
    // The exit waits behind held output, so the controller's stop comes after the death.
    h.provider.emitData(id, 'x'.repeat(200_000))
    h.provider.emitData(id, 'held')
    h.provider.emitExit(id, { exitCode: 0, signal: 15, stopRequestedBeforeDeath: true })
    expect(h.exits()).toEqual([])
    h.controller.kill(id)
    expect(h.exits().map((event) => event.cause)).toEqual([{ kind: 'signaled', signal: 15 }])
  })

  it('without the attestation, an exit of a PTY this controller never stopped keeps its cause', async () => {
    const h = createHarness()
    await h.provider.spawn({ sessionId: 'shared' })
    expect(await h.controller.attach('shared')).toBe(true)
    h.provider.emitExit('shared', { exitCode: 0, signal: 1 })
    expect(h.exits().map((event) => event.cause)).toEqual([{ kind: 'signaled', signal: 1 }])
  })
})
