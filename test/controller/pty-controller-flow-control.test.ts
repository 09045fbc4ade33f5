import { describe, expect, it } from 'vitest'
import { FLOW_CONTROL_ACK_SIZE_CHARS, FLOW_CONTROL_HIGH_WATERMARK_CHARS, FLOW_CONTROL_LOW_WATERMARK_CHARS, PRODUCER_PAUSE_MAX_HOLD_MS, PRODUCER_PAUSE_REASSERT_INTERVAL_MS } from '../../src/controller/flow-control.js'
import type { PtyDataEvent } from '../../src/contracts/index.js'
import { createHarness } from './controller-harness.js'

type H = ReturnType<typeof createHarness>

/** The strict mode: engaged from the first byte, as these tests of the mechanism need. */
const strict = (): H => createHarness({ controller: { flowControl: { mode: 'always' } } })

function flowCalls(h: H): string[] {
  return h.provider.calls
    .filter((call) => call.method === 'pauseProducer' || call.method === 'resumeProducer')
    .map((call) => call.method)
}

async function floodedPty(h: H, chars: number): Promise<string> {
  const { id } = await h.controller.spawn({})
  h.provider.emitData(id, 'x'.repeat(chars))
  return id
}

describe('flow control', () => {
  it('uses VS Code defaults, with an ack size that cannot strand a paused producer', () => {
    expect(FLOW_CONTROL_HIGH_WATERMARK_CHARS).toBe(100_000)
    expect(FLOW_CONTROL_LOW_WATERMARK_CHARS).toBe(5_000)
    expect(FLOW_CONTROL_ACK_SIZE_CHARS).toBeLessThanOrEqual(FLOW_CONTROL_LOW_WATERMARK_CHARS)
    expect(PRODUCER_PAUSE_REASSERT_INTERVAL_MS).toBeLessThan(PRODUCER_PAUSE_MAX_HOLD_MS)
  })

  it('pauses only above the high watermark', async () => {
    const h = strict()
    const id = await floodedPty(h, FLOW_CONTROL_HIGH_WATERMARK_CHARS)
    expect(flowCalls(h)).toEqual([])
    h.provider.emitData(id, 'y')
    expect(flowCalls(h)).toEqual(['pauseProducer'])
    expect(h.provider.getPty(id)?.paused).toBe(true)
    expect(h.controller.getFlowControlState(id)).toEqual({
      unacknowledgedChars: FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1,
      paused: true,
      engaged: true,
      pausedSince: 0,
    })
  })

  it('resumes only below the low watermark, in ack-size steps', async () => {
    const h = strict()
    const id = await floodedPty(h, FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1)
    let acked = 0
    while (FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1 - acked >= FLOW_CONTROL_LOW_WATERMARK_CHARS) {
      expect(h.provider.getPty(id)?.paused).toBe(true)
      h.controller.acknowledgeData(id, FLOW_CONTROL_ACK_SIZE_CHARS)
      acked += FLOW_CONTROL_ACK_SIZE_CHARS
    }
    expect(flowCalls(h)).toEqual(['pauseProducer', 'resumeProducer'])
    expect(h.provider.getPty(id)?.paused).toBe(false)
    expect(h.provider.getPty(id)?.acknowledgedChars).toBe(acked)
  })

  it('re-asserts a held pause every interval while still above the high watermark, not when below it', async () => {
    const h = strict()
    const id = await floodedPty(h, FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1)
    h.clock.advance(PRODUCER_PAUSE_REASSERT_INTERVAL_MS)
    expect(flowCalls(h)).toEqual(['pauseProducer', 'pauseProducer'])
    // Between the watermarks: still paused, but no re-assert.
    h.controller.acknowledgeData(id, 10)
    h.clock.advance(PRODUCER_PAUSE_REASSERT_INTERVAL_MS - 1)
    expect(flowCalls(h)).toEqual(['pauseProducer', 'pauseProducer'])
  })

  it.each(['always', 'acknowledged'] as const)(
    "%s mode: the cap forces a resume, forgives the debt and reports consumer_not_acknowledging once",
    async (mode) => {
      const h = createHarness({ controller: { flowControl: { mode } } })
      const { id } = await h.controller.spawn({})
      h.controller.acknowledgeData(id, 0) // opts in (a no-op in 'always' mode)
      h.provider.emitData(id, 'x'.repeat(FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1))
      h.clock.advance(PRODUCER_PAUSE_MAX_HOLD_MS - 1)
      expect(h.provider.getPty(id)?.paused).toBe(true)
      expect(h.errors()).toEqual([])
      h.clock.advance(1)
      expect(h.provider.getPty(id)?.paused).toBe(false)
      expect(h.controller.getFlowControlState(id)).toMatchObject({
        paused: false,
        unacknowledgedChars: 0,
        engaged: mode === 'always',
      })
      expect(h.errors().map((error) => [error.code, error.ptyId])).toEqual([['consumer_not_acknowledging', id]])
      // The next output does not pause again at once: a wedged consumer costs one hold, not a crawl.
      h.provider.emitData(id, 'z')
      expect(h.controller.getFlowControlState(id)).toMatchObject({ paused: false })
      // Re-asserting never extended the first pause: exactly two pauses before the cap.
      expect(flowCalls(h)).toEqual(['pauseProducer', 'pauseProducer', 'resumeProducer'])
      // A second wedge is not reported again.
      h.controller.acknowledgeData(id, 0)
      h.provider.emitData(id, 'x'.repeat(FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1))
      h.clock.advance(PRODUCER_PAUSE_MAX_HOLD_MS)
      expect(flowCalls(h)).toEqual(['pauseProducer', 'pauseProducer', 'resumeProducer', 'pauseProducer', 'pauseProducer', 'resumeProducer'])
      expect(h.errors()).toHaveLength(1)
    },
  )

  it('default mode: never slows a consumer that has not acknowledged; the first ack engages it', async () => {
    const h = createHarness()
    const id = await floodedPty(h, FLOW_CONTROL_HIGH_WATERMARK_CHARS * 50)
    h.provider.emitExit(id, { exitCode: 0 })
    expect(flowCalls(h)).toEqual([])
    expect(h.exits()).toHaveLength(1)

    const { id: acking } = await h.controller.spawn({})
    h.provider.emitData(acking, 'x'.repeat(FLOW_CONTROL_HIGH_WATERMARK_CHARS * 2))
    expect(h.controller.getFlowControlState(acking)).toMatchObject({ engaged: false, paused: false })
    h.controller.acknowledgeData(acking, FLOW_CONTROL_ACK_SIZE_CHARS)
    expect(h.controller.getFlowControlState(acking)).toMatchObject({ engaged: true, paused: false })
    h.provider.emitData(acking, 'y')
    expect(flowCalls(h)).toEqual(['pauseProducer'])
  })

  it('credits an ack made inside the data listener for the chunk it was handed', async () => {
    const h = strict()
    const { id } = await h.controller.spawn({})
    h.controller.on('data', ({ ptyId, data }) => h.controller.acknowledgeData(ptyId, data.length))
    for (let i = 0; i < 5; i += 1) h.provider.emitData(id, 'x'.repeat(FLOW_CONTROL_HIGH_WATERMARK_CHARS))
    expect(h.controller.getFlowControlState(id)?.unacknowledgedChars).toBe(0)
    expect(h.provider.getPty(id)?.acknowledgedChars).toBe(5 * FLOW_CONTROL_HIGH_WATERMARK_CHARS)
    expect(flowCalls(h)).toEqual([])
  })

  it('clamps acks to what is in flight, and forwards only the credited amount', async () => {
    const h = createHarness()
    const id = await floodedPty(h, 300)
    h.controller.acknowledgeData(id, 1_000)
    h.controller.acknowledgeData(id, 1_000)
    expect(h.controller.getFlowControlState(id)?.unacknowledgedChars).toBe(0)
    expect(h.provider.getPty(id)?.acknowledgedChars).toBe(300)
  })

  it('releases a paused producer on exit and leaves no state behind for a reused id', async () => {
    const h = strict()
    h.provider.scriptNextSpawn({ id: 'reused' })
    await h.controller.spawn({})
    h.provider.emitData('reused', 'x'.repeat(FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1))
    h.provider.emitExit('reused', { exitCode: 0 })
    // The exit waited behind nothing (no held output), and the pause was released.
    expect(flowCalls(h)).toEqual(['pauseProducer', 'resumeProducer'])
    expect(h.clock.pendingTimerCount()).toBe(0)
    h.provider.scriptNextSpawn({ id: 'reused' })
    await h.controller.spawn({})
    expect(h.controller.getFlowControlState('reused')).toEqual({ unacknowledgedChars: 0, paused: false, engaged: true, pausedSince: null })
  })

  it('releases the producer when a stop is requested, so held output and the exit can drain', async () => {
    const h = strict()
    const id = await floodedPty(h, FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1)
    h.provider.emitData(id, 'held')
    h.provider.emitExit(id, { exitCode: 0, signal: 15 })
    expect(h.data().map((event) => event.data)).not.toContain('held')
    expect(h.exits()).toEqual([])
    h.controller.kill(id)
    expect(h.events.slice(-3).map((entry) => entry.type)).toEqual(['data', 'exit', 'liveness'])
    // The process died before the stop (its exit was only held back): its own cause, not operator_close (issue 13.4).
    expect(h.exits()[0]?.cause).toEqual({ kind: 'signaled', signal: 15 })
  })

  it('honours custom watermarks and timings', async () => {
    const h = createHarness({
      controller: { flowControl: { mode: 'always', highWatermarkChars: 10, lowWatermarkChars: 2, pauseReassertIntervalMs: 3, pauseMaxHoldMs: 7 } },
    })
    const id = await floodedPty(h, 11)
    h.clock.advance(3)
    h.clock.advance(3)
    expect(flowCalls(h)).toEqual(['pauseProducer', 'pauseProducer', 'pauseProducer'])
    h.clock.advance(1)
    expect(flowCalls(h).at(-1)).toBe('resumeProducer')
    expect(h.controller.getFlowControlState(id)?.unacknowledgedChars).toBe(0)
    h.provider.emitData(id, 'abcde')
    h.controller.acknowledgeData(id, 3)
    expect(h.controller.getFlowControlState(id)?.unacknowledgedChars).toBe(2)
  })

  it.each([false, { enabled: false }] as const)('is off with flowControl: %j (acks are forwarded unclamped)', async (flowControl) => {
    const h = createHarness({ controller: { flowControl } })
    const id = await floodedPty(h, FLOW_CONTROL_HIGH_WATERMARK_CHARS * 3)
    h.clock.advance(PRODUCER_PAUSE_MAX_HOLD_MS * 2)
    expect(flowCalls(h)).toEqual([])
    h.controller.acknowledgeData(id, 7)
    expect(h.provider.getPty(id)?.acknowledgedChars).toBe(7)
    expect(h.controller.getFlowControlState(id)).toBeNull()
  })

  it('forwards acks unclamped to a provider that acknowledges data but cannot pause', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const forwarded: number[] = []
    Object.assign(h.provider, {
      pauseProducer: undefined,
      resumeProducer: undefined,
      acknowledgeData: (_id: string, chars: number) => forwarded.push(chars),
    })
    h.provider.emitData(id, 'x'.repeat(FLOW_CONTROL_HIGH_WATERMARK_CHARS * 2))
    h.controller.acknowledgeData(id, 123)
    expect(forwarded).toEqual([123])
    expect(h.controller.getFlowControlState(id)).toEqual({ unacknowledgedChars: 0, paused: false, engaged: false, pausedSince: null })
  })

  it('swallows a transport pause error, reports it, and keeps delivering', async () => {
    const h = strict()
    const { id } = await h.controller.spawn({})
    h.provider.pauseProducer = () => {
      throw new Error('transport gone')
    }
    h.provider.emitData(id, 'x'.repeat(FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1))
    h.provider.emitData(id, 'after')
    expect(h.data().map((event) => event.data.length)).toEqual([FLOW_CONTROL_HIGH_WATERMARK_CHARS + 1, 5])
    expect(h.errors().map((error) => error.code)).toEqual(['flow_control_failed'])
  })

  it('rejects a malformed ack with a TypeError naming it', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    expect(() => h.controller.acknowledgeData(id, -1)).toThrow(
      'Expected the `chars` argument to be a non-negative integer (a count of chars), got -1 (number)',
    )
    expect(() => h.controller.acknowledgeData(id, Number.NaN)).toThrow(TypeError)
  })

  // Found in review (helper-214): the providers' shared check said "a non-negative integer", the
  // controller "a non-negative integer (a count of chars)" — two wordings of one refusal.
  it('words a malformed ack as the providers do (one wording, whichever layer refuses)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const refusalOf = (call: () => unknown): unknown => {
      try {
        call()
      } catch (error) {
        return error
      }
      return undefined
    }
    for (const bad of [-1, 1.5, '5']) {
      const controller = refusalOf(() => h.controller.acknowledgeData(id, bad as never))
      const provider = refusalOf(() => h.provider.acknowledgeData!(id, bad as never))
      expect(provider).toBeInstanceOf(TypeError)
      expect(provider).toMatchObject({ code: 'invalid_option', option: 'chars', value: bad, message: (controller as Error).message })
    }
  })

  // A provider may act from inside the controller's pause or resume — report an exit it already
  // saw, or hand over output it had already read — as every method may be called while another is
  // in flight (docs/writing-a-provider.md). Order and the flow state must hold all the same.
  describe('a provider that reports from inside pauseProducer or resumeProducer', () => {
    const tight = (): H => createHarness({ controller: { flowControl: { mode: 'always', highWatermarkChars: 5, lowWatermarkChars: 2 } } })
    const ofPty = (h: H, id: string): string[] =>
      h.events.flatMap((entry) =>
        entry.type === 'data' && entry.event.ptyId === id ? [`data ${entry.event.data} @${entry.event.seq}`] : entry.type === 'exit' && entry.event.ptyId === id ? ['exit'] : [],
      )

    it('an exit reported from inside the pause comes after the chunk that caused the pause', async () => {
      const h = tight()
      const { id } = await h.controller.spawn({})
      h.provider.pauseProducer = (ptyId: string) => h.provider.emitExit(ptyId, { exitCode: 0 })
      h.provider.emitData(id, 'abcdefghij')
      // Before: the exit, then the chunk — output after its exit.
      expect(ofPty(h, id)).toEqual(['data abcdefghij @10', 'exit'])
      await h.controller.dispose()
      expect(h.clock.pendingTimerCount()).toBe(0)
    })

    it('output handed over from inside the pause comes after the chunk that caused it, in sequence order', async () => {
      const h = tight()
      const { id } = await h.controller.spawn({})
      let pauses = 0
      h.provider.pauseProducer = (ptyId: string) => {
        if (++pauses === 1) h.provider.emitData(ptyId, '[rest]')
      }
      h.provider.emitData(id, 'abcdefghij')
      // Before: '[rest]' at 16, then 'abcdefghij' at 10 — text and seq backwards.
      expect(ofPty(h, id)).toEqual(['data abcdefghij @10', 'data [rest] @16'])
    })

    it('with dataBatchMs too', async () => {
      const h = createHarness({ controller: { dataBatchMs: 5, flowControl: { mode: 'always', highWatermarkChars: 5, lowWatermarkChars: 2 } } })
      const { id } = await h.controller.spawn({})
      h.provider.pauseProducer = (ptyId: string) => h.provider.emitExit(ptyId, { exitCode: 0 })
      h.provider.emitData(id, 'abcdefghij')
      expect(ofPty(h, id)).toEqual(['data abcdefghij @10', 'exit'])
    })

    it('output handed over from inside the resume at the exit neither pauses the dead PTY again nor leaves a timer', async () => {
      const h = tight()
      const { id, incarnationId } = await h.controller.spawn({})
      // A provider that holds what it reads while paused, and hands it over from inside the resume
      // (straight to the controller's listener: the fake refuses output of a PTY it saw exit).
      const toController = h.provider.calls.find((call) => call.method === 'onData')!.args[0] as (event: PtyDataEvent) => void
      let paused = false
      const held: string[] = []
      h.provider.pauseProducer = () => {
        paused = true
      }
      h.provider.resumeProducer = (ptyId: string) => {
        paused = false
        for (const data of held.splice(0)) toController({ id: ptyId, data, incarnationId: incarnationId! })
      }
      h.provider.emitData(id, 'abcdefghij')
      expect(paused).toBe(true)
      held.push('x'.repeat(20))
      // The process ends; the provider reports it without holding the exit behind what it holds.
      h.provider.emitExit(id, { exitCode: 0 })
      // Before: the handed-over output paused it again, and that pause's timers outlived the exit
      // (and dispose), the provider left paused.
      expect(paused).toBe(false)
      expect(h.clock.pendingTimerCount()).toBe(0)
      expect(h.controller.getFlowControlState(id)).toMatchObject({ paused: false, unacknowledgedChars: 0 })
      await h.controller.dispose()
      expect(h.clock.pendingTimerCount()).toBe(0)
      expect(paused).toBe(false)
    })

    it('an exit reported from inside a re-asserted pause leaves no timer behind', async () => {
      const h = createHarness({ controller: { flowControl: { mode: 'always', highWatermarkChars: 5, lowWatermarkChars: 2, pauseReassertIntervalMs: 1_000 } } })
      const { id } = await h.controller.spawn({})
      let pauses = 0
      // A provider that learns of the exit when the pause is re-asserted (it looks at the process).
      h.provider.pauseProducer = (ptyId: string) => {
        if (++pauses === 2) h.provider.emitExit(ptyId, { exitCode: 0 })
      }
      h.provider.emitData(id, 'abcdefghij')
      h.clock.advance(1_000)
      expect(pauses).toBe(2)
      expect(ofPty(h, id)).toEqual(['data abcdefghij @10', 'exit'])
      // Before: the re-assert re-armed itself on the released state, and that timer outlived dispose.
      expect(h.clock.pendingTimerCount()).toBe(0)
      await h.controller.dispose()
      expect(h.clock.pendingTimerCount()).toBe(0)
    })
  })
})
