import { describe, expect, it } from 'vitest'
import { resolveWaitDeadline } from 'ptykit/contracts'

// The refusal's example is built from the refused value: right for a duration (5000 -> "Date.now() + 5000"),
// nonsense for what else lands there — a deadline in epoch seconds, or a stale epoch time in ms.
describe('the long-past deadlineMs refusal suggests a sensible example', () => {
  const now = Date.parse('2026-12-06T10:00:00Z')
  it.each([
    ['epoch seconds', Math.floor(now / 1000) + 5],
    ['an epoch time in ms a year old', now - 365 * 86_400_000],
  ])('%s', (_label, value) => {
    let message = ''
    try {
      resolveWaitDeadline({ deadlineMs: value }, 1_000, now)
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toMatch(new RegExp(`got ${value}`))
    expect(message).not.toContain(`Date.now() + ${value}`)
  })
})
