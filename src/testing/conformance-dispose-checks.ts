import { expect } from './conformance-expect.js'
import { PROVIDER_PROMISE_METHODS } from '../contracts/disposed-provider.js'
import type { PtyProvider } from '../contracts/index.js'
import type { PtyProviderConformanceCheck, PtyProviderConformanceOptions } from './conformance-types.js'
import { ProviderCallHungError } from './conformance-harness.js'

// The rule of `PtyProvider.dispose`: once its dispose resolved, a provider refuses every call but
// `dispose` and the `on*` subscriptions with `provider_disposed`.

/** How one call after dispose ended: a throw, a rejection, or an answer (a breach of the rule). */
type CallEnd = { how: 'threw' | 'rejected'; error: unknown } | { how: 'answered'; answer: unknown }

async function endOf(call: () => unknown): Promise<CallEnd> {
  let answer: unknown
  try {
    answer = call()
  } catch (error) {
    return { how: 'threw', error }
  }
  if (typeof (answer as { then?: unknown } | null)?.then !== 'function') return { how: 'answered', answer }
  try {
    return { how: 'answered', answer: await answer }
  } catch (error) {
    // A hang is a failure of its own (the harness bounds every call), not the refusal asked for.
    if (error instanceof ProviderCallHungError) throw error
    return { how: 'rejected', error }
  }
}

/**
 * The calls made of a disposed provider, each with the arguments a caller would pass about `id`
 * (a PTY it held): every method of {@link PtyProvider} but `dispose` and the subscriptions, the
 * optional ones where the provider has them.
 */
function callsAbout(provider: PtyProvider, id: string, spawnOptions: Parameters<PtyProvider['spawn']>[0]): [string, () => unknown][] {
  const calls: [keyof PtyProvider, () => unknown][] = [
    ['spawn', () => provider.spawn(spawnOptions)],
    ['write', () => provider.write(id, 'x')],
    ['writeBytes', () => provider.writeBytes?.(id, new Uint8Array([0x78]))],
    ['resize', () => provider.resize(id, 80, 24)],
    ['getSize', () => provider.getSize?.(id)],
    ['shutdown', () => provider.shutdown(id, { immediate: true })],
    ['pauseProducer', () => provider.pauseProducer?.(id)],
    ['resumeProducer', () => provider.resumeProducer?.(id)],
    ['acknowledgeData', () => provider.acknowledgeData?.(id, 1)],
    ['listProcesses', () => provider.listProcesses()],
    ['hasPty', () => provider.hasPty?.(id)],
    ['probeLiveness', () => provider.probeLiveness?.(id)],
    ['getCwd', () => provider.getCwd?.(id)],
    ['getForegroundProcess', () => provider.getForegroundProcess?.(id)],
    ['hasChildProcesses', () => provider.hasChildProcesses?.(id)],
    ['confirmForeground', () => provider.confirmForeground?.(id)],
    ['supportsForegroundProcessEvidence', () => provider.supportsForegroundProcessEvidence?.()],
    ['resetInputModes', () => provider.resetInputModes?.(id)],
    ['clearBuffer', () => provider.clearBuffer?.(id)],
    ['getBufferSnapshot', () => provider.getBufferSnapshot?.(id)],
  ]
  return calls.filter(([method]) => typeof provider[method] === 'function')
}

/** The checks of what a provider answers once disposed (see `ptyProviderConformanceChecks`). */
export function disposeConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  if (options.capabilities?.refusesCallsAfterDispose === false) return []
  return [
    {
      name: 'once disposed, refuses every call but `dispose` and the subscriptions with `provider_disposed`, naming the method (a method answering with a promise rejects, any other throws)',
      async run(h) {
        if (h.provider.dispose === undefined) return
        const live = await h.spawn(options.spawnLongRunning())
        await h.provider.dispose()
        for (const [method, call] of callsAbout(h.provider, live.id, options.spawnLongRunning())) {
          const end = await endOf(call)
          const expected = PROVIDER_PROMISE_METHODS.has(method) ? 'rejected' : 'threw'
          // A disposed provider no longer knows what runs (its host's processes may outlive it):
          // `[]`, `null` or `false` would be a guess passed off as an answer.
          expect(end.how, `provider.${method}() after dispose must be refused (${expected === 'rejected' ? 'a rejection' : 'a throw'}), not answered`).toBe(expected)
          const error = (end as { error?: unknown }).error as { code?: unknown; message?: unknown } | undefined
          expect(error?.code, `the code of provider.${method}()'s refusal after dispose`).toBe('provider_disposed')
          expect(String(error?.message), `provider.${method}()'s refusal after dispose names the method`).toMatch(new RegExp(`\\b${method}\\b`))
        }
        // Idempotent: a second dispose resolves, and a subscription still answers an unsubscribe.
        await h.provider.dispose()
        const unsubscribe = h.provider.onExit(() => undefined)
        expect(typeof unsubscribe, 'onExit after dispose answers an unsubscribe function').toBe('function')
        unsubscribe()
      },
    },
  ]
}
