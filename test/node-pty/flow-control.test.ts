/**
 * Flow control against real processes: a consumer that never acknowledges is never slowed down
 * (every byte and the exit arrive, the producer is never paused); one that acknowledges is paused
 * and resumed, and loses nothing.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyControllerError } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind } from './pty-test-support.js'

/** Generous: a bound on a stall, not a speed target (the stall this guards against took minutes). */
const GENEROUS_TIMEOUT_MS = 120_000

type Counted = { provider: NodePtyProvider; pauses: number; resumes: number }

const opened: { controller: PtyController; provider: NodePtyProvider }[] = []

expectNoChildLeftBehind(async () => {
  for (const { controller, provider } of opened.splice(0)) {
    await controller.dispose()
    await provider.dispose()
  }
})

/** A node-pty provider whose pause/resume calls are counted. */
function countedProvider(): Counted {
  const provider = createNodePtyProvider()
  const counted: Counted = { provider, pauses: 0, resumes: 0 }
  const pause = provider.pauseProducer.bind(provider)
  const resume = provider.resumeProducer.bind(provider)
  Object.assign(provider, {
    pauseProducer: (id: string) => {
      counted.pauses += 1
      pause(id)
    },
    resumeProducer: (id: string) => {
      counted.resumes += 1
      resume(id)
    },
  })
  return counted
}

const flood = (chars: number): { file: string; args: string[] } => ({
  file: '/bin/sh',
  args: ['-c', `head -c ${chars} /dev/zero | tr '\\0' b`],
})

/**
 * Spawn a flood on a controller that runs nothing else, and collect its output (no newline: the
 * PTY's ONLCR leaves it unchanged) and exit.
 */
async function runFlood(
  controller: PtyController,
  chars: number,
  onChunk: (id: string, chunk: string) => void = () => undefined,
): Promise<{ received: number; allB: boolean; exitCause: unknown; dataAfterExit: boolean }> {
  let received = 0
  let allB = true
  let exited = false
  let dataAfterExit = false
  const done = new Promise<unknown>((resolve) => {
    controller.on('exit', (event) => {
      exited = true
      resolve(event.cause)
    })
  })
  // Why no id filter: the one PTY's first chunks can arrive before `spawn()` resolves.
  controller.on('data', (event) => {
    if (exited) dataAfterExit = true
    received += event.data.length
    if (allB && /[^b]/.test(event.data)) allB = false
    onChunk(event.ptyId, event.data)
  })
  await controller.spawn({ ...flood(chars), cols: 200, rows: 50 })
  const exitCause = await done
  return { received, allB, exitCause, dataAfterExit }
}

function setup(flowControl?: Parameters<typeof createPtyController>[0]['flowControl']): {
  controller: PtyController
  counted: Counted
  errors: PtyControllerError[]
} {
  const counted = countedProvider()
  const controller = createPtyController({ provider: counted.provider, ...(flowControl === undefined ? {} : { flowControl }) })
  const errors: PtyControllerError[] = []
  controller.on('error', (error) => errors.push(error))
  opened.push({ controller, provider: counted.provider })
  return { controller, counted, errors }
}


describe('flow control with real processes (node-pty)', () => {
  it.each([300_000, 10_000_000])(
    'a consumer that never acknowledges gets all %i chars and the exit, and the producer is never paused',
    async (chars) => {
      const { controller, counted, errors } = setup()
      const result = await runFlood(controller, chars)
      expect(result).toEqual({ received: chars, allB: true, exitCause: { kind: 'exited', exitCode: 0 }, dataAfterExit: false })
      expect(counted.pauses).toBe(0)
      expect(errors).toEqual([])
    },
    GENEROUS_TIMEOUT_MS,
  )

  it('a consumer that acknowledges is paused and resumed, and nothing is lost', async () => {
    // Small watermarks so a 1 MB flood pauses many times.
    const { controller, counted, errors } = setup({ highWatermarkChars: 20_000, lowWatermarkChars: 2_000 })
    let unacked = 0
    let first = true
    const chars = 1_000_000
    const result = await runFlood(controller, chars, (id, chunk) => {
      if (first) {
        // The opt-in: the first chunk is acknowledged at once.
        first = false
        controller.acknowledgeData(id, chunk.length)
        return
      }
      unacked += chunk.length
      // A consumer that renders in batches: it acknowledges its backlog only once the producer
      // was paused (checked after the controller counted this chunk).
      queueMicrotask(() => {
        if (controller.getFlowControlState(id)?.paused === true && unacked > 0) {
          const batch = unacked
          unacked = 0
          controller.acknowledgeData(id, batch)
        }
      })
    })
    expect(result).toEqual({ received: chars, allB: true, exitCause: { kind: 'exited', exitCode: 0 }, dataAfterExit: false })
    expect(counted.pauses).toBeGreaterThan(0)
    expect(counted.resumes).toBeGreaterThan(0)
    expect(errors).toEqual([])
  }, GENEROUS_TIMEOUT_MS)
})
