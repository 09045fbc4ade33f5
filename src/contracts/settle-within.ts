import { clampTimerDelay } from './deadline.js'
/**
 * `work`'s result, or `fallback` when `ms` pass first; the timer is cleared as soon as either
 * settles, so a finished race never keeps the process alive. A rejection of `work` before the
 * timer passes through. Internal: the "wait, but not past this" race a provider writes around a
 * remote answer.
 *
 * Why the race itself is returned (no `async` wrapper): awaiting it costs the caller no more
 * microtask turns than an inline `Promise.race` did.
 *
 * @param ms - the wait in milliseconds (clamped to what `setTimeout` holds, ~24.8 days)
 */
export function settleWithin<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), clampTimerDelay(ms))
  })
  const race = Promise.race([work, timeout])
  const clear = (): void => clearTimeout(timer)
  race.then(clear, clear)
  return race
}
