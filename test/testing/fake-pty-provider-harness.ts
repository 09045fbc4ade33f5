import type { PtyDataEvent, PtyExitEvent } from 'ptykit/contracts'
import { createFakePtyProvider, type FakePtyProvider, type FakePtyProviderOptions } from 'ptykit/testing'

// Shared by the fake-pty-provider.*.test.ts files: a provider plus an ordered log of its events.

export type Recorded = { kind: 'data'; event: PtyDataEvent } | { kind: 'exit'; event: PtyExitEvent }

// Arrange helper: a provider plus a log of every event it emitted, in order.
export function setup(options?: FakePtyProviderOptions): { provider: FakePtyProvider; log: Recorded[] } {
  const provider = createFakePtyProvider(options)
  const log: Recorded[] = []
  provider.onData((event) => log.push({ kind: 'data', event }))
  provider.onExit((event) => log.push({ kind: 'exit', event }))
  return { provider, log }
}

export const kinds = (log: Recorded[]): string[] =>
  log.map((entry) => (entry.kind === 'data' ? `data:${entry.event.data}` : `exit:${entry.event.code}`))

export const exitsOf = (log: Recorded[]): PtyExitEvent[] =>
  log.flatMap((entry) => (entry.kind === 'exit' ? [entry.event] : []))
