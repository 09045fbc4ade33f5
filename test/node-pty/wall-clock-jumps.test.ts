import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { PtyEventLog, isDead, liveChildrenOf, waitFor, expectNoChildLeftBehind } from './pty-test-support.js'

// The wall clock is not the stop's clock: a laptop that sleeps and resumes, NTP stepping the clock,
// or a test's mocked `Date` moves `Date.now()` while timers (monotonic) do not follow. A stop's
// escalation (HUP → TERM → KILL) and its deadline must be counted on the timers' clock once the
// caller's budget has been read.

let provider: NodePtyProvider
let log: PtyEventLog

expectNoChildLeftBehind(async () => {
  vi.restoreAllMocks()
  await provider.dispose()
})

beforeAll(() => {
  provider = createNodePtyProvider()
  log = new PtyEventLog(provider)
})

afterEach(() => {
  vi.restoreAllMocks()
})

const HUP_IGNORING = { file: '/bin/sh', args: ['-c', "trap '' HUP; sleep 30"] }
const realNow = Date.now.bind(Date)

async function spawnHupIgnoring(): Promise<{ id: string; pid: number }> {
  const result = await provider.spawn(HUP_IGNORING)
  await waitFor(() => liveChildrenOf(result.pid!)[0], 'the sleep child')
  return { id: result.id, pid: result.pid! }
}

describe('node-pty stop under wall-clock jumps', () => {
  it('a frozen Date (a test mocking Date only) still escalates to SIGTERM after the hang-up grace', async () => {
    const { id, pid } = await spawnHupIgnoring()
    const frozen = realNow()
    vi.spyOn(Date, 'now').mockReturnValue(frozen)
    const started = performance.now()
    await provider.shutdown(id, { timeoutMs: 3_000 })
    expect(performance.now() - started).toBeLessThan(2_500)
    expect((await log.exitOf(id)).cause).toEqual({ kind: 'signaled', signal: 15 })
    expect(isDead(pid)).toBe(true)
  }, 8_000)

  it('the clock stepped back an hour mid-stop: the escalation does not wait an hour', async () => {
    const { id, pid } = await spawnHupIgnoring()
    const stopping = provider.shutdown(id, { timeoutMs: 3_000 })
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000)
    const started = performance.now()
    await stopping
    expect(performance.now() - started).toBeLessThan(2_500)
    expect((await log.exitOf(id)).cause).toEqual({ kind: 'signaled', signal: 15 })
    expect(isDead(pid)).toBe(true)
  }, 8_000)

  it('the clock leapt forward an hour mid-stop (resume from sleep): the stop still succeeds by SIGTERM', async () => {
    const { id, pid } = await spawnHupIgnoring()
    const stopping = provider.shutdown(id, { timeoutMs: 3_000 })
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000)
    await expect(stopping).resolves.toBeUndefined()
    expect((await log.exitOf(id)).cause).toEqual({ kind: 'signaled', signal: 15 })
    expect(isDead(pid)).toBe(true)
  }, 8_000)
})

describe('controller over the node-pty provider under wall-clock jumps', () => {
  it('a leap forward of an hour mid-stopAndWait: still verified, the exit an operator close, the process dead', async () => {
    const { createPtyController } = await import('ptykit/controller')
    const own = createNodePtyProvider()
    const controller = createPtyController({ provider: own })
    const exits: unknown[] = []
    controller.on('exit', (event) => exits.push(event.cause))
    const errors: unknown[] = []
    controller.on('error', (event) => errors.push(event))
    try {
      const { id, pid } = await controller.spawn(HUP_IGNORING)
      await waitFor(() => liveChildrenOf(pid!)[0], 'the sleep child')
      const stopping = controller.stopAndWait(id, { deadlineMs: Date.now() + 5_000 })
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000)
      await expect(stopping).resolves.toBe(true)
      expect(exits).toEqual([{ kind: 'operator_close' }])
      expect(isDead(pid!)).toBe(true)
      expect(errors).toEqual([])
    } finally {
      vi.restoreAllMocks()
      await controller.dispose()
      await own.dispose()
    }
  }, 8_000)
})
