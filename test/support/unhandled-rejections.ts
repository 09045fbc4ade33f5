// Tests that an async listener's or hook's rejection is observed: each one Node would report as an
// unhandled rejection (which ends a process by default) is recorded instead, test by test.
import { afterEach, beforeEach } from 'vitest'

/**
 * Record the unhandled rejections of each test of the calling `describe` (its hooks are registered
 * there); the array is emptied before each test. Node announces one after the microtasks of the turn
 * it happened in: wait a timer turn before reading it.
 */
export function recordUnhandledRejections(): unknown[] {
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason)
  }
  beforeEach(() => {
    unhandled.length = 0
    process.on('unhandledRejection', onUnhandled)
  })
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled)
  })
  return unhandled
}
