import type {
  PtyBufferSerialization,
  PtyDisposable,
  PtyProviderBufferSnapshot,
  PtyRendererSerializer,
} from '../contracts/index.js'
import { onAbortShared } from './abort.js'
import { disposableRegistration } from './disposable.js'
import { assertNonNegativeNumber, describeValue } from './argument-validation.js'
import type { PendingTimer } from './controller-timers.js'
import { EXITED_PTY_RECORDS_KEPT } from './pty-record.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/** How long `waitForRendererSerializer` waits when no timeout is given. */
export const RENDERER_SERIALIZER_WAIT_DEFAULT_MS = 5_000

/**
 * How long `serializeBuffer` waits for a registered renderer's answer when no `timeoutMs` is given,
 * before the provider's snapshot answers instead. Why bounded: a view whose renderer hung or
 * crashed without unregistering (a webview's process gone) would hold every caller — a restart
 * saving its terminals — for ever; xterm's serialize addon answers in milliseconds.
 */
export const RENDERER_SERIALIZE_TIMEOUT_MS = 5_000

/** What `serializeBuffer` reports of a renderer serializer: a throw (or rejection), and an answer not given in time. */
export type RendererFaults = { threw: (error: unknown) => void; timedOut: (timeoutMs: number) => void }

/**
 * One registration. `waiting` holds the callbacks of the answers it owes, called when its view is
 * gone — the registration disposed, or the controller disposed — so they are no longer waited for;
 * `null` once it is.
 */
type Registration = { serializer: PtyRendererSerializer; generation: number; waiting: Set<() => void> | null }

/** Retire a registration: every answer still waited for from it is given up on. */
function retire(registration: Registration): void {
  const waiting = registration.waiting
  registration.waiting = null
  for (const giveUp of waiting ?? []) giveUp()
}

type Waiter = { afterGeneration: number; resolve: (registered: boolean) => void }

/** @throws TypeError when `serializer` is not a function (disposed controller or not). */
export function assertRendererSerializer(serializer: unknown): asserts serializer is PtyRendererSerializer {
  if (typeof serializer !== 'function') {
    throw argumentRefusal(`Expected the \`serializer\` argument to be a function, got ${describeValue(serializer)}`, 'serializer', serializer)
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
  /**
   * Ids whose last registration was disposed, oldest first. Their generation is remembered for the
   * latest `EXITED_PTY_RECORDS_KEPT` of them (as the controller remembers ended PTYs), not for every
   * id a view ever registered for: a host that runs for days registers a view per PTY it spawns.
   */
  readonly #retired = new Set<string>()
  readonly #waiters = new Map<string, Set<Waiter>>()
  /** How to give up each renderer answer in flight (the controller's dispose gives up on all). */
  readonly #answering = new Set<() => void>()

  /** Whether the controller was disposed (`close`): a wait cut short then is no renderer's fault. */
  #closed = false

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
  register(ptyId: string, serializer: PtyRendererSerializer): PtyDisposable & Disposable {
    assertRendererSerializer(serializer)
    const generation = (this.#generations.get(ptyId) ?? 0) + 1
    this.#generations.set(ptyId, generation)
    this.#retired.delete(ptyId)
    const registration: Registration = { serializer, generation, waiting: new Set() }
    this.#current.set(ptyId, registration)
    const waiters = this.#waiters.get(ptyId)
    for (const waiter of waiters ?? []) {
      if (generation > waiter.afterGeneration) waiter.resolve(true)
    }
    return disposableRegistration(() => {
      if (this.#current.get(ptyId) === registration) {
        this.#current.delete(ptyId)
        this.#rememberRetired(ptyId)
      }
      retire(registration)
    })
  }

  /** `ptyId` has no registration any more: keep its generation among the latest retired ids only. */
  #rememberRetired(ptyId: string): void {
    this.#retired.delete(ptyId)
    this.#retired.add(ptyId)
    if (this.#retired.size <= EXITED_PTY_RECORDS_KEPT) return
    const oldest = this.#retired.values().next().value as string
    this.#retired.delete(oldest)
    // Someone waits for a registration newer than the one it saw: forgetting the generation would
    // restart it at 1, which that wait might never see as newer. Kept until the next retirement.
    if (this.#waiters.has(oldest)) this.#retired.add(oldest)
    else this.#generations.delete(oldest)
  }

  /** The controller was disposed: no renderer's answer is waited for any more. */
  close(): void {
    this.#closed = true
    for (const giveUp of [...this.#answering]) giveUp()
  }

  /** Whether a serializer is registered for the PTY now. */
  has(ptyId: string): boolean {
    return this.#current.has(ptyId)
  }

  /** The generation of the PTY's latest registration (also when since disposed); `0` before any. */
  generation(ptyId: string): number {
    return this.#generations.get(ptyId) ?? 0
  }

  /**
   * `serializeBuffer`: the current serializer's snapshot, else the provider's (see
   * {@link serializeBufferFor}) — also once the serializer's registration is disposed, or the
   * controller, before it answered, or when it has not answered within `timeoutMs` (reported
   * through `faults.timedOut`).
   */
  serialize(
    ptyId: string,
    options: { scrollbackRows?: number | undefined },
    timeoutMs: number,
    providerSnapshot: () => Promise<PtyProviderBufferSnapshot | null>,
    faults: RendererFaults,
  ): Promise<PtyBufferSerialization | null> {
    const registration = this.#current.get(ptyId)
    if (registration === undefined) return serializeBufferFor(undefined, options, providerSnapshot, faults.threw)
    const untilRetired = (giveUp: () => void): (() => void) => {
      const waiting = registration.waiting
      if (waiting === null) {
        giveUp()
        return () => undefined
      }
      const timer = this.#after(timeoutMs)
      const stop = (): void => {
        timer.cancel()
        waiting.delete(onRetired)
        this.#answering.delete(onRetired)
      }
      const onRetired = (): void => {
        stop()
        giveUp()
      }
      waiting.add(onRetired)
      this.#answering.add(onRetired)
      // Past `timeoutMs` the renderer is given up on, as if its view went away. A timer that
      // `dispose()` cut short (it resolves then) is not the renderer's fault: `close` gave up already.
      void timer.promise.then(() => {
        if (this.#closed || !waiting.has(onRetired)) return
        onRetired()
        faults.timedOut(timeoutMs)
      })
      return stop
    }
    return serializeBufferFor(registration.serializer, options, providerSnapshot, faults.threw, untilRetired)
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
      let stopWaiting: (() => void) | undefined
      const waiter: Waiter = {
        afterGeneration,
        resolve: (registered) => {
          timer.cancel()
          stopWaiting?.()
          const set = this.#waiters.get(ptyId)
          set?.delete(waiter)
          if (set?.size === 0) this.#waiters.delete(ptyId)
          resolve(registered)
        },
      }
      waiters.add(waiter)
      // One abort listener per signal, however many waits share it (see onAbortShared).
      if (signal !== undefined) stopWaiting = onAbortShared(signal, () => waiter.resolve(false))
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
 * something malformed, or threw, or its view went away — or its time ran out — without answering:
 * `untilRetired` calls back) the provider's. `untilRetired(giveUp)` returns how to stop listening.
 */
export async function serializeBufferFor(
  serializer: PtyRendererSerializer | undefined,
  options: { scrollbackRows?: number | undefined },
  providerSnapshot: () => Promise<PtyProviderBufferSnapshot | null>,
  onRendererError: (error: unknown) => void,
  untilRetired?: (giveUp: () => void) => () => void,
): Promise<PtyBufferSerialization | null> {
  if (serializer !== undefined) {
    try {
      const answering = serializer(options)
      const answer = untilRetired === undefined ? await answering : await answerUnlessRetired(answering, untilRetired)
      if (isSerialization(answer)) return answer
    } catch (error) {
      onRendererError(error)
    }
  }
  const snapshot = await providerSnapshot()
  return snapshot === null ? null : serializationOfSnapshot(snapshot)
}

/**
 * The renderer's answer, or `undefined` once its view went away first (an answer still owed then
 * is nobody's any more: a later rejection of it is dropped).
 */
function answerUnlessRetired(answering: unknown, untilRetired: (giveUp: () => void) => () => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const stop = untilRetired(() => resolve(undefined))
    Promise.resolve(answering).then(
      (answer) => {
        stop()
        resolve(answer)
      },
      (error: unknown) => {
        stop()
        reject(error)
      },
    )
  })
}
