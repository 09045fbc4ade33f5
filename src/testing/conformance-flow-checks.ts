import { expect } from './conformance-expect.js'
import { CONFORMANCE_POLL_INTERVAL_MS } from './conformance-harness.js'
import { expectCauseAgreesWithCode } from './conformance-event-checks.js'
import { CONFORMANCE_DEFAULT_TIMEOUT_MS, type PtyProviderConformanceCheck, type PtyProviderConformanceOptions } from './conformance-types.js'
import type { PtySpawnResult } from '../contracts/index.js'

// The conformance check of producer flow control at a PTY's end: a PTY that ends while its
// consumer holds its output paused.

/**
 * The text the check's PTY prints (16 KiB on one line, no quote): more than one read of a PTY
 * usually takes, so some of it is still on its way when the first output pauses the producer, and
 * less than a terminal's output buffer holds, so the program can finish writing and end while paused.
 */
const PAUSED_END_TEXT = `ptykit-conformance-paused-${'0123456789abcdef'.repeat(1_024)}`

/**
 * How long the check holds the pause (unless the exit arrives first) — time for the program to
 * finish writing and end while nothing reads its output.
 */
const PAUSED_END_HOLD_MS = 300

/** How long the check listens on after the exit for anything that must not follow it. */
const PAUSED_END_LINGER_MS = 100

/**
 * The flow-control checks (see `ptyProviderConformanceChecks`): run against every provider that
 * has `pauseProducer` and `resumeProducer` (one without them passes: it has no flow control).
 *
 * A PTY whose first output pauses its producer (`pauseProducer`, as a controller does above its
 * high watermark) ends while paused; after {@link PAUSED_END_HOLD_MS} the consumer acknowledges
 * what it got (`acknowledgeData`, where the provider has it: its debt falls below any low
 * watermark) and resumes (`resumeProducer`). Its exit must arrive — within `timeoutMs` of the
 * resume, never held for good by the pause — after **all** of its output, and be its only one:
 * nothing lost, nothing after it. An exit that arrives while paused is fine, as long as all the
 * output came before it (a provider may read a dead program's tail out past a pause).
 *
 * @param options - how to drive the provider (as for the whole suite).
 */
export function flowControlConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  return [
    {
      name: 'delivers all output of a PTY that ended while its producer was paused, then its single exit, once resumed (acknowledged below the low watermark): nothing lost, no hang',
      async run(h) {
        const { provider } = h
        if (typeof provider.pauseProducer !== 'function' || typeof provider.resumeProducer !== 'function') return
        // Paused at its first output, from the listener itself: before the next chunk can arrive.
        // Only this check's PTY is spawned on this provider, so the first output is its.
        let pausedAt: number | null = null
        const unsubscribe = provider.onData((event) => {
          if (pausedAt !== null) return
          pausedAt = performance.now()
          provider.pauseProducer?.(event.id)
        })
        let result: PtySpawnResult
        try {
          result = await h.spawn(options.spawnEcho(PAUSED_END_TEXT))
          const { id } = result
          const hasExited = (): boolean => h.exitsOf(id).length > 0
          // The timers' own clock: a provider's test that mocks `Date` must not make these waits run for ever.
          const started = performance.now()
          const timeoutMs = options.timeoutMs ?? CONFORMANCE_DEFAULT_TIMEOUT_MS
          // The first output (or the exit: a provider that sent none while paused is checked below).
          while (pausedAt === null && !hasExited() && performance.now() - started < timeoutMs) await tick(h.provider, options)
          if (pausedAt !== null) {
            const holdUntil = (pausedAt as number) + PAUSED_END_HOLD_MS
            while (!hasExited() && performance.now() < holdUntil) await tick(h.provider, options)
            // The consumer caught up: its debt acknowledged (below any low watermark), then the resume.
            const received = h.outputOf(id).length
            if (typeof provider.acknowledgeData === 'function' && received > 0) provider.acknowledgeData(id, received)
            provider.resumeProducer?.(id)
          }
        } finally {
          unsubscribe()
        }
        const exit = await h.waitForExit(result.id)
        const lingerUntil = performance.now() + PAUSED_END_LINGER_MS
        while (performance.now() < lingerUntil) await tick(h.provider, options)
        const ordered = h.eventsOf(result.id)
        const exitIndex = ordered.findIndex((recorded) => recorded.kind === 'exit')
        expect(ordered.slice(exitIndex + 1), 'nothing of a PTY may follow its exit: no second exit, no output (output held by the pause belongs before it)').toEqual([])
        const before = ordered
          .slice(0, exitIndex)
          .flatMap((recorded) => (recorded.kind === 'data' ? [recorded.event.data] : []))
          .join('')
        expect(
          before.includes(PAUSED_END_TEXT),
          `all ${PAUSED_END_TEXT.length} chars the program printed must arrive before its exit, the pause notwithstanding (got ${before.length} chars before the exit)`,
        ).toBe(true)
        expect(exit.code).toBe(0)
        expectCauseAgreesWithCode(exit, 0, result)
      },
    },
  ]
}

/** Drive the provider once and wait one poll interval. */
async function tick(provider: Parameters<NonNullable<PtyProviderConformanceOptions['drive']>>[0], options: PtyProviderConformanceOptions): Promise<void> {
  await options.drive?.(provider)
  await new Promise((resolve) => setTimeout(resolve, CONFORMANCE_POLL_INTERVAL_MS))
}
