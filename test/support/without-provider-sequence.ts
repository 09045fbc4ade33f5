/**
 * A fake provider whose spawn replies carry no `providerSequence` (the field is optional in the
 * contract): the controller then tells the runtime itself that a process it started streams from
 * its first byte, and reads the PTY's sequence from the runtime.
 */
import type { PtyProvider } from '../../src/contracts/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

/** A new fake (`fake`, to drive it) and the provider over it that omits `providerSequence` (`provider`). */
export function providerWithoutSequence(): { fake: ReturnType<typeof createFakePtyProvider>; provider: PtyProvider } {
  const fake = createFakePtyProvider()
  const provider: PtyProvider = Object.create(fake) as PtyProvider
  provider.spawn = async (options) => {
    const { providerSequence: _omitted, ...reply } = await fake.spawn(options)
    return reply
  }
  return { fake, provider }
}
