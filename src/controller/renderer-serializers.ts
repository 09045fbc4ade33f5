import type {
  PtyBufferSerialization,
  PtyDisposable,
  PtyProviderBufferSnapshot,
  PtyRendererSerializer,
} from '../contracts/index.js'
import { assertNonNegativeNumber, describeValue } from './argument-validation.js'
import type { PendingTimer } from './controller-timers.js'

/** How long `waitForRendererSerializer` waits when no timeout is given. */
export const RENDERER_SERIALIZER_WAIT_DEFAULT_MS = 5_000

type Registration = { serializer: PtyRendererSerializer; generation: number }
type Waiter = { afterGeneration: number; resolve: (registered: boolean) => void }

/** @throws TypeError when `serializer` is not a function (disposed controller or not). */
export function assertRendererSerializer(serializer: unknown): asserts serializer is PtyRendererSerializer {
  if (typeof serializer !== 'function') {
    throw new TypeError(`Expected the \`serializer\` argument to be a function, got ${describeValue(serializer)}`)
  }
}

/**
 * The views that hold a PTY's authoritative screen. Each registration gets the PTY's next
 * generation (1, 2…), so a caller can wait for a view that registered *after* the one it saw.
 */
export class RendererSerializerRegistry {
  readonly #after: (ms: number) => PendingTimer
  readonly #current = new Map<string, Registration>()
  readonly #generations = new Map<string, number>()
  readonly #waiters = new Map<string, Set<Waiter>>()

  /** `after` arms the wait timers (the controller's, so `dispose` ends every wait). */
  constructor(after: (ms: number) => PendingTimer) {
    this.#after = after
  }

  /**
   * Register `serializer` as the PTY's current one; disposing it unregisters it unless a newer one
   * replaced it.
   *
   * @throws TypeError when `serializer` is not a function.
   */
  register(ptyId: string, serializer: PtyRendererSerializer): PtyDisposable {
    assertRendererSerializer(serializer)
    const generation = (this.#generations.get(ptyId) ?? 0) + 1
    this.#generations.set(ptyId, generation)
    const registration: Registration = { serializer, generation }
    this.#current.set(ptyId, registration)
    const waiters = this.#waiters.get(ptyId)
    for (const waiter of waiters ?? []) {
      if (generation > waiter.afterGeneration) waiter.resolve(true)
    }
    return {
      dispose: () => {
        if (this.#current.get(ptyId) === registration) this.#current.delete(ptyId)
      },
    }
  }

  /** Whether a serializer is registered for the PTY now. */
  has(ptyId: string): boolean {
    return this.#current.has(ptyId)
  }

  /** The generation of the PTY's latest registration (also when since disposed); `0` before any. */
  generation(ptyId: string): number {
    return this.#generations.get(ptyId) ?? 0
  }

  /** `serializeBuffer`: the current serializer's snapshot, else the provider's (see {@link serializeBufferFor}). */
  serialize(
    ptyId: string,
    options: { scrollbackRows?: number },
    providerSnapshot: () => Promise<PtyProviderBufferSnapshot | null>,
    onRendererError: (error: unknown) => void,
  ): Promise<PtyBufferSerialization | null> {
    return serializeBufferFor(this.#current.get(ptyId)?.serializer, options, providerSnapshot, onRendererError)
  }

  /**
   * `true` as soon as a serializer with a generation above `afterGeneration` is registered (at
   * once if the current one is); `false` when `timeoutMs` passes, `signal` aborts, or the
   * controller is disposed first.
   *
   * @throws TypeError when `afterGeneration` or `timeoutMs` is not a non-negative number.
   */
  wait(
    ptyId: string,
    afterGeneration: number,
    timeoutMs: number = RENDERER_SERIALIZER_WAIT_DEFAULT_MS,
    signal: AbortSignal | undefined = undefined,
  ): Promise<boolean> {
    assertNonNegativeNumber('argument', 'afterGeneration', afterGeneration)
    assertNonNegativeNumber('argument', 'timeoutMs', timeoutMs)
    const current = this.#current.get(ptyId)
    if (current !== undefined && current.generation > afterGeneration) return Promise.resolve(true)
    if (signal?.aborted === true) return Promise.resolve(false)
    return new Promise<boolean>((resolve) => {
      const timer = this.#after(timeoutMs)
      let waiters = this.#waiters.get(ptyId)
      if (waiters === undefined) {
        waiters = new Set()
        this.#waiters.set(ptyId, waiters)
      }
      const onAbort = (): void => waiter.resolve(false)
      const waiter: Waiter = {
        afterGeneration,
        resolve: (registered) => {
          timer.cancel()
          signal?.removeEventListener('abort', onAbort)
          const set = this.#waiters.get(ptyId)
          set?.delete(waiter)
          if (set?.size === 0) this.#waiters.delete(ptyId)
          resolve(registered)
        },
      }
      waiters.add(waiter)
      signal?.addEventListener('abort', onAbort, { once: true })
      void timer.promise.then(() => waiter.resolve(false))
    })
  }
}

function isSerialization(value: unknown): value is PtyBufferSerialization {
  if (typeof value !== 'object' || value === null) return false
  const answer = value as Partial<PtyBufferSerialization>
  return (
    typeof answer.data === 'string' &&
    Number.isInteger(answer.cols) &&
    (answer.cols as number) > 0 &&
    Number.isInteger(answer.rows) &&
    (answer.rows as number) > 0
  )
}

/** A provider snapshot as a serialization (only the fields it proves). */
export function serializationOfSnapshot(snapshot: PtyProviderBufferSnapshot): PtyBufferSerialization {
  const serialization: PtyBufferSerialization = { data: snapshot.data, cols: snapshot.cols, rows: snapshot.rows, seq: snapshot.seq }
  if (snapshot.lastTitle !== undefined) serialization.lastTitle = snapshot.lastTitle
  if (snapshot.kittyKeyboardFlags !== undefined) serialization.kittyKeyboardFlags = snapshot.kittyKeyboardFlags
  return serialization
}

/**
 * `serializeBuffer`: the registered renderer's snapshot, else (no renderer, or it answered `null`,
 * something malformed, or threw) the provider's.
 */
export async function serializeBufferFor(
  serializer: PtyRendererSerializer | undefined,
  options: { scrollbackRows?: number },
  providerSnapshot: () => Promise<PtyProviderBufferSnapshot | null>,
  onRendererError: (error: unknown) => void,
): Promise<PtyBufferSerialization | null> {
  if (serializer !== undefined) {
    try {
      const answer = await serializer(options)
      if (isSerialization(answer)) return answer
    } catch (error) {
      onRendererError(error)
    }
  }
  const snapshot = await providerSnapshot()
  return snapshot === null ? null : serializationOfSnapshot(snapshot)
}
