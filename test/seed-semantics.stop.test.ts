/**
 * The seed's meaning of the stop members, one `describe` per rule (issue 11 items 1 — the stop
 * half —, 9 and 10; issue 13 items 4 and 5). The other items walk in `seed-semantics.test.ts`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PtyProcessInfo } from '../src/contracts/index.js'
import { createPtyController } from '../src/controller/index.js'
import { createNodePtyProvider } from '../src/node-pty/index.js'
import { createFakePtyProvider } from '../src/testing/index.js'
import { createHarness } from './controller/controller-harness.js'
import { waitFor } from './node-pty/pty-test-support.js'

type Harness = ReturnType<typeof createHarness>

function shutdownOptions(h: Harness): Record<string, unknown>[] {
  return h.provider.calls.filter((call) => call.method === 'shutdown').map((call) => (call.args[1] ?? {}) as Record<string, unknown>)
}

/** Collect Node's process warnings while `work` runs. */
async function warningsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = []
  const onWarning = (warning: Error): void => {
    seen.push(warning.name)
  }
  process.on('warning', onWarning)
  try {
    await work()
    await new Promise((resolve) => setTimeout(resolve, 20))
  } finally {
    process.off('warning', onWarning)
  }
  return seen
}

describe('11.1: a stop deadline (`deadlineMs`) is an absolute epoch time; `timeoutMs` is a duration', () => {
  // The harness's manual clock starts at 0, as `createManualClock()` does: the deadline is read
  // against `Date.now()` (held still here, so the time left is exact), the wait counted on the clock.
  const EPOCH_NOW = 1_800_000_000_000
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('stopAndWait(id, { deadlineMs: Date.now() + 5 000 }) waits up to that time on a controller clock of its own, and hands the provider the time left', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(EPOCH_NOW)
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id, { deadlineMs: Date.now() + 5_000 }))).resolves.toBe(true)
    expect(shutdownOptions(h)[0]).toMatchObject({ timeoutMs: 5_000 })
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'operator_close' }])
  })

  it('a stop that never confirms answers false once that time has passed on the clock (not ~57 years later)', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(EPOCH_NOW)
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id, { deadlineMs: Date.now() + 5_000 }))).resolves.toBe(false)
    // Forced at half the time left, found still there: false within the 5 s, on the clock.
    expect(h.clock.now()).toBe(2_500)
    expect(shutdownOptions(h)).toEqual([expect.objectContaining({ timeoutMs: 5_000 }), expect.objectContaining({ immediate: true, timeoutMs: 2_500 })])
  })

  it('a deadline already past means "check once, do not wait"', async () => {
    const h = createHarness()
    h.clock.advance(1_000_000)
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    const before = h.clock.now()
    await expect(h.run(h.controller.stopAndWait(id, { deadlineMs: Date.now() - 1 }))).resolves.toBe(false)
    expect(h.clock.now()).toBe(before)
  })

  it('an aborted signal makes stopAndWait resolve false — at once, or mid-wait — never hang, never throw', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    await expect(h.run(h.controller.stopAndWait(id, { signal: AbortSignal.abort() }), 0)).resolves.toBe(false)
    const controller = new AbortController()
    const waiting = h.controller.stopAndWait(id, { timeoutMs: 60_000, signal: controller.signal })
    await h.settle()
    controller.abort()
    await expect(h.run(waiting, 0)).resolves.toBe(false)
  })

  it('both forms at once, or a non-finite one, is a TypeError naming the option (controller and fake provider)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    await expect(h.controller.stopAndWait(id, { deadlineMs: 1, timeoutMs: 1 })).rejects.toThrow(/`deadlineMs`.*`timeoutMs`/)
    await expect(h.controller.stopAndWait(id, { deadlineMs: Number.NaN })).rejects.toThrow(/`deadlineMs`/)
    await expect(h.provider.shutdown(id, { deadlineMs: 1, timeoutMs: 1 })).rejects.toThrow(TypeError)
  })

  it('a duration given as deadlineMs (5 000: 1970) is a TypeError naming the option and timeoutMs, and stops nothing (stopAndWait, a handle, listProcesses)', async () => {
    // Read as the epoch time it is, it would be a deadline 56 years past: "no grace", a KILL at once.
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const durationError = /`deadlineMs`.*got 5000, which is 1970-01-01T00:00:05\.000Z.*`timeoutMs`/
    await expect(h.controller.stopAndWait(terminal.id, { deadlineMs: 5_000 })).rejects.toThrow(durationError)
    await expect(terminal.stop({ deadlineMs: 5_000 })).rejects.toThrow(durationError)
    await expect(h.controller.listProcesses(null, { deadlineMs: 5_000 })).rejects.toThrow(durationError)
    await expect(h.provider.shutdown(terminal.id, { deadlineMs: 5_000 })).rejects.toThrow(durationError)
    expect(shutdownOptions(h)).toEqual([{ deadlineMs: 5_000 }])
    expect(h.provider.livePtyIds()).toEqual([terminal.id])
    expect(h.exits()).toEqual([])
  })

  it('a point in time given as timeoutMs (Date.now() + 5 000: a wait of 56 years) is a TypeError naming the option and deadlineMs, and stops nothing', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const timeoutMs = Date.now() + 5_000
    const pointInTimeError = /`timeoutMs`.*which reads as the time .*`deadlineMs`/
    await expect(h.controller.stopAndWait(terminal.id, { timeoutMs })).rejects.toThrow(pointInTimeError)
    await expect(terminal.stop({ timeoutMs })).rejects.toThrow(pointInTimeError)
    await expect(h.controller.listProcesses(null, { timeoutMs })).rejects.toThrow(pointInTimeError)
    await expect(h.provider.shutdown(terminal.id, { timeoutMs })).rejects.toThrow(pointInTimeError)
    expect(h.provider.livePtyIds()).toEqual([terminal.id])
    expect(h.exits()).toEqual([])
  })

  it('node-pty: stopAndWait(id, { deadlineMs: 5 000 }) is refused and the shell keeps running; timeoutMs: 5 000 then stops it', async () => {
    const controller = createPtyController({ provider: createNodePtyProvider() })
    try {
      const { id } = await controller.spawn({ file: '/bin/sleep', args: ['30'] })
      await expect(controller.stopAndWait(id, { deadlineMs: 5_000 })).rejects.toThrow(TypeError)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(controller.hasPty(id)).toBe(true)
      expect(controller.getSize(id)).not.toBeNull()
      await expect(controller.stopAndWait(id, { timeoutMs: 5_000 })).resolves.toBe(true)
    } finally {
      await controller.dispose()
    }
  })

  it('node-pty: shutdown({ deadlineMs: Date.now() + 3 000 }) stops the process; a huge deadline waits until done, without TimeoutOverflowWarning', async () => {
    const provider = createNodePtyProvider()
    try {
      const first = await provider.spawn({ file: '/bin/sleep', args: ['30'] })
      await provider.shutdown(first.id, { deadlineMs: Date.now() + 3_000 })
      expect(await provider.probeLiveness(first.id)).toBe(false)
      await expect(provider.shutdown(first.id, { deadlineMs: 1, timeoutMs: 1 })).rejects.toThrow(TypeError)
      const second = await provider.spawn({ file: '/bin/sleep', args: ['30'] })
      const warnings = await warningsDuring(() => provider.shutdown(second.id, { deadlineMs: Number.MAX_SAFE_INTEGER }))
      expect(warnings).not.toContain('TimeoutOverflowWarning')
      expect(await provider.probeLiveness(second.id)).toBe(false)
    } finally {
      await provider.dispose()
    }
  })

  it('controller: a huge deadline means "wait until verified", never false at once with a TimeoutOverflowWarning (13.5)', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    try {
      const { id } = await controller.spawn({})
      let verified: boolean | undefined
      const warnings = await warningsDuring(async () => {
        verified = await controller.stopAndWait(id, { deadlineMs: Number.MAX_SAFE_INTEGER })
      })
      expect(verified).toBe(true)
      expect(warnings).not.toContain('TimeoutOverflowWarning')
    } finally {
      await controller.dispose()
    }
  })
})

describe('11.9: an exit event carries its evidence (`observed`); a provider-observed exit certifies the death', () => {
  it('a provider exit with a negative code still certifies the death; a synthetic one does not', async () => {
    const h = createHarness()
    const observed = await h.controller.spawn({})
    h.provider.emitExit(observed.id, { exitCode: -1, observed: 'provider' })
    expect(h.controller.hasPty(observed.id)).toBe(false)
    const synthetic = await h.controller.spawn({})
    h.provider.emitExit(synthetic.id, { exitCode: -1, observed: 'synthetic' })
    expect(h.controller.hasPty(synthetic.id)).toBeNull()
  })

  it('a real exit after a synthetic stop_unverified publishes its real cause', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'fail' })
    const { id } = await h.controller.spawn({})
    h.controller.kill(id)
    await h.settle()
    h.provider.emitExit(id, { exitCode: 3 })
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'unknown', reason: 'stop_unverified' }, { kind: 'operator_close' }])
    expect(h.liveness().at(-1)?.verdict).toEqual({ kind: 'exited' })
  })
})

describe('11.10: stopAndWait follows the seed (force within the deadline, keepHistory, fresh listing, untracked ids)', () => {
  it('forces (immediate: true) within a deadline of 5 s or less', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await h.controller.spawn({})
    await h.run(h.controller.stopAndWait(id, { timeoutMs: 2_000 }))
    expect(shutdownOptions(h).map((options) => options.immediate === true)).toEqual([false, true])
    expect(h.clock.now()).toBeLessThan(2_000)
  })

  it('passes keepHistory to the provider', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    await h.run(h.controller.stopAndWait(id, { keepHistory: true }))
    expect(shutdownOptions(h)[0]).toMatchObject({ keepHistory: true })
  })

  it('with keepHistory, polls the listing (every 100 ms, up to 1 s) while a host still lists the stopped PTY', async () => {
    for (const keepHistory of [true, false]) {
      const h = createHarness()
      const { id, incarnationId } = await h.controller.spawn({})
      const list = h.provider.listProcesses.bind(h.provider)
      let staleUntil = Number.POSITIVE_INFINITY
      h.provider.listProcesses = async (options) => {
        const rows = await list(options)
        if (h.clock.now() >= staleUntil) return rows
        const stale: PtyProcessInfo = { id, hostId: 'local', incarnationId: incarnationId!, pid: 1, cwd: null, title: 'sh' }
        return [...rows, stale]
      }
      staleUntil = h.clock.now() + 300
      expect(await h.run(h.controller.stopAndWait(id, { timeoutMs: 5_000, keepHistory }))).toBe(keepHistory)
    }
  })

  it('verifies with a fresh listing even when the provider is not authoritative: still listed is not stopped', async () => {
    const h = createHarness({ provider: { authoritativeListings: false } })
    const { id, incarnationId } = await h.controller.spawn({})
    h.provider.listProcesses = async () => [{ id, hostId: 'local', incarnationId: incarnationId!, pid: 1, cwd: null, title: 'sh' }]
    await expect(h.run(h.controller.stopAndWait(id, { timeoutMs: 1_000 }))).resolves.toBe(false)
  })

  it('an id this controller does not track: the owning host is asked (and stopped), not answered false', async () => {
    const provider = createFakePtyProvider()
    const first = createPtyController({ provider })
    const second = createPtyController({ provider })
    try {
      const { id } = await first.spawn({})
      expect(provider.livePtyIds()).toContain(id)
      await expect(second.stopAndWait(id, { timeoutMs: 2_000 })).resolves.toBe(true)
      expect(provider.livePtyIds()).not.toContain(id)
      await expect(second.stopAndWait('never-spawned', { timeoutMs: 2_000 })).resolves.toBe(true)
      provider.setListingFailure(new Error('host unreachable'))
      await expect(second.stopAndWait('never-spawned', { timeoutMs: 2_000 })).resolves.toBe(false)
    } finally {
      provider.setListingFailure(undefined)
      await first.dispose()
      await second.dispose()
    }
  })
})

describe('13.4: an exit that happened before the stop is not an operator close', () => {
  it('fake provider: an exit(9) held behind paused output keeps its cause when a stop comes meanwhile', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.pauseProducer(id)
    h.provider.emitData(id, 'tail')
    h.provider.emitExit(id, { exitCode: 9 })
    expect(h.exits()).toEqual([])
    const stopping = h.controller.stopAndWait(id, { timeoutMs: 2_000 })
    h.provider.resumeProducer(id)
    await expect(h.run(stopping)).resolves.toBe(true)
    expect(h.exits().map((exit) => exit.cause)).toEqual([{ kind: 'exited', exitCode: 9 }])
  })

  it('node-pty: a process that exits 9 while its producer is paused is exited(9), at its death, and a stop after it changes nothing', async () => {
    const provider = createNodePtyProvider()
    const controller = createPtyController({ provider })
    const causes: unknown[] = []
    controller.on('exit', (event) => causes.push(event.cause))
    try {
      const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.3; echo tail; exit 9'] })
      provider.pauseProducer(reply.id)
      // The node-pty provider reads a dead process's tail out at its death, paused or not, so its
      // exit is not held behind output (which is how a stop used to come "meanwhile").
      await waitFor(() => (causes.length > 0 ? true : undefined), 'the exit, with no resume')
      expect(await controller.stopAndWait(reply.id, { timeoutMs: 5_000 })).toBe(true)
      expect(causes).toEqual([{ kind: 'exited', exitCode: 9 }])
    } finally {
      await controller.dispose()
      await provider.dispose()
    }
  })
})

