/**
 * The fake provider as a provider without incarnation ids (they are optional in the contract): its
 * spawn results and events name none, so the controller must tell processes apart without them.
 */
import type { PtyProvider } from 'ptykit/contracts'
import type { createFakePtyProvider } from 'ptykit/testing'

type Fake = ReturnType<typeof createFakePtyProvider>

/** `provider`, its spawn results and its `data`, `exit` and `outputLoss` events without `incarnationId`. */
export function withoutIncarnations(provider: Fake): PtyProvider {
  const strip = <T extends { incarnationId?: unknown }>(value: T): T => {
    const copy = { ...value }
    delete copy.incarnationId
    return copy
  }
  return Object.assign(Object.create(provider) as Fake, {
    spawn: async (options: Parameters<Fake['spawn']>[0]) => strip(await provider.spawn(options)),
    onData: (listener: (event: never) => void) => provider.onData((event) => listener(strip(event) as never)),
    onExit: (listener: (event: never) => void) => provider.onExit((event) => listener(strip(event) as never)),
    onOutputLoss: (listener: (event: never) => void) => provider.onOutputLoss!((event) => listener(strip(event) as never)),
  })
}
