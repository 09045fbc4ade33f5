import {
  createListenerSet,
  type PtyBytesEvent,
  type PtyDataEvent,
  type PtyExitEvent,
  type PtyOutputLossEvent,
  type PtyProvider,
} from '../../src/contracts/index.js'
import { createFakePtyProvider, type FakePtyProviderOptions } from '../../src/testing/index.js'

/**
 * The fake provider as a hand-written provider whose four event channels the test drives itself
 * (`channels.*.fire(event)`: anything may be emitted, as a third-party provider might), everything
 * else the fake's. For tests of what the controller makes of a provider's events and answers.
 */
export function fakeWithTestDrivenEvents(options?: FakePtyProviderOptions) {
  const fake = createFakePtyProvider(options)
  const channels = {
    data: createListenerSet<PtyDataEvent>(),
    bytes: createListenerSet<PtyBytesEvent>(),
    loss: createListenerSet<PtyOutputLossEvent>(),
    exits: createListenerSet<PtyExitEvent>(),
  }
  const provider: PtyProvider = {
    ...fake,
    name: 'hand-written',
    onData: (listener) => channels.data.add(listener),
    onBytes: (listener) => channels.bytes.add(listener),
    onOutputLoss: (listener) => channels.loss.add(listener),
    onExit: (listener) => channels.exits.add(listener),
    spawn: (spawnOptions) => fake.spawn(spawnOptions),
  }
  return { fake, provider, channels }
}
