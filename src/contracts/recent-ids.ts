import { describeValue } from './describe-value.js'

/**
 * A bounded memory of recently seen ids, oldest forgotten first — how a provider remembers which
 * PTYs exited (so a late write to one is refused as `pty_exited`, not `pty_not_found`) without
 * growing for ever in a long-lived host.
 */
export interface RecentIds {
  /**
   * Remember `id` as the most recent one (remembering it again moves it to the front).
   *
   * @returns the ids forgotten to stay within the capacity (oldest first; usually none or one)
   */
  remember(id: string): string[]
  /** True while `id` is remembered. */
  has(id: string): boolean
  /** Forget `id` (a new PTY took it). Idempotent. */
  forget(id: string): void
  /** Forget every id. */
  clear(): void
  /** How many ids are remembered (never more than the capacity). */
  readonly size: number
}

/**
 * Create a {@link RecentIds} memory holding at most `capacity` ids.
 *
 * @param capacity - a positive safe integer (a `RangeError` naming the value otherwise)
 */
export function createRecentIds(capacity: number): RecentIds {
  if (!Number.isSafeInteger(capacity) || capacity < 1) {
    throw new RangeError(`Expected the \`capacity\` of a recent-ids memory to be a positive integer, got ${describeValue(capacity)}`)
  }
  // A Set iterates in insertion order: its first value is the oldest id.
  const ids = new Set<string>()
  return {
    remember(id) {
      ids.delete(id)
      ids.add(id)
      const forgotten: string[] = []
      while (ids.size > capacity) {
        const oldest = ids.values().next().value as string
        ids.delete(oldest)
        forgotten.push(oldest)
      }
      return forgotten
    },
    has: (id) => ids.has(id),
    forget(id) {
      ids.delete(id)
    },
    clear() {
      ids.clear()
    },
    get size() {
      return ids.size
    },
  }
}
