import { expect } from './conformance-expect.js'
import type { PtyProvider } from '../contracts/index.js'
import type { PtyProviderConformanceCheck, PtyProviderConformanceOptions } from './conformance-types.js'

// A provider's `detach()` (the pty host provider's; the fake plays it): it lets go of its PTYs,
// which run on, and answers what is still true — refusing what it could only guess.

/** A provider with a `detach()`, as the pty host provider and the fake have. */
type Detachable = PtyProvider & { detach(): Promise<void> }

/** The code and message of what `call` rejected with, or `answered` when it resolved. */
async function refusalOf(call: () => Promise<unknown>): Promise<{ code?: unknown; message?: unknown; ptyId?: unknown } | 'answered'> {
  try {
    await call()
    return 'answered'
  } catch (error) {
    return (error ?? {}) as { code?: unknown; message?: unknown; ptyId?: unknown }
  }
}

/** The checks of what a provider answers once detached (capability `detach`; see `ptyProviderConformanceChecks`). */
export function detachConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  if (options.capabilities?.detach !== true) return []
  return [
    {
      name: 'once detached, refuses a spawn, a listing and a stop with `provider_detached` (naming the method and the PTY), answers "unknown" about a PTY it no longer sees, and knows the one whose exit it reported gone',
      async run(h) {
        const provider = h.provider as Detachable
        expect(typeof provider.detach, 'a provider with the `detach` capability has a detach() method').toBe('function')
        const live = await h.spawn(options.spawnLongRunning())
        const ended = await h.spawn(options.spawnExit(0))
        await h.waitForExit(ended.id)
        await provider.detach()
        // Refused: an answer would be a guess (an empty listing proves every PTY gone, a resolved stop says one was stopped).
        for (const [method, call, ptyId] of [
          ['spawn', () => provider.spawn(options.spawnLongRunning()), undefined],
          ['listProcesses', () => provider.listProcesses(), undefined],
          ['shutdown', () => provider.shutdown(live.id, { immediate: true }), live.id],
        ] as const) {
          const refusal = await refusalOf(call)
          expect(refusal === 'answered' ? 'answered' : refusal.code, `provider.${method}() after detach is refused \`provider_detached\``).toBe('provider_detached')
          const error = refusal as { message?: unknown; ptyId?: unknown }
          expect(String(error.message), `provider.${method}()'s refusal after detach names the method`).toMatch(new RegExp(`\\b${method}\\b`))
          if (ptyId !== undefined) expect(error.ptyId, `provider.${method}()'s refusal after detach names the PTY in \`ptyId\``).toBe(ptyId)
        }
        // The PTY whose exit it reported: known gone — its stop has nothing left to do.
        expect(await refusalOf(() => provider.shutdown(ended.id)), 'a stop of a PTY whose exit was reported before the detach resolves').toBe('answered')
        // Blind, not broken: "unknown" about the PTY that runs on, `false` about the one it saw end.
        if (provider.hasPty !== undefined) {
          expect(provider.hasPty(live.id), 'hasPty of a PTY that runs on after detach is null').toBeNull()
          expect(provider.hasPty(ended.id), 'hasPty of a PTY whose exit was reported before the detach is false').toBe(false)
        }
        if (provider.probeLiveness !== undefined) {
          expect(await provider.probeLiveness(live.id), 'probeLiveness of a PTY that runs on after detach is null').toBeNull()
          expect(await provider.probeLiveness(ended.id), 'probeLiveness of a PTY whose exit was reported before the detach is false').toBe(false)
        }
        for (const [method, ask] of [
          ['getCwd', provider.getCwd],
          ['getForegroundProcess', provider.getForegroundProcess],
          ['hasChildProcesses', provider.hasChildProcesses],
          ['confirmForeground', provider.confirmForeground],
          ['getBufferSnapshot', provider.getBufferSnapshot],
        ] as const) {
          if (ask === undefined) continue
          expect(await (ask as (id: string) => Promise<unknown>).call(provider, live.id), `provider.${method}() of a PTY that runs on after detach is null`).toBeNull()
        }
        expect(await provider.write(live.id, 'x'), 'a write to a PTY that runs on after detach is refused `provider_refused_write` (nothing handed on)').toEqual({ kind: 'refused', reason: 'provider_refused_write' })
        expect(await provider.write(ended.id, 'x'), 'a write to a PTY whose exit was reported before the detach is refused `pty_exited`').toEqual({ kind: 'refused', reason: 'pty_exited' })
        expect(provider.resize(live.id, 100, 30), 'a resize after detach answers false').toBe(false)
        // Idempotent.
        await provider.detach()
      },
    },
  ]
}
