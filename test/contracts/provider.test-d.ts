import { describe, it, expectTypeOf, assertType } from 'vitest'
import type {
  ProviderBufferSnapshot,
  ProviderProcessInfo,
  ProviderSpawnOptions,
  PtyDataEvent,
  PtyExitEvent,
  PtyIncarnationId,
  PtyProcessInfo,
  PtyProvider,
  PtyProviderBufferSnapshot,
  PtySpawnResult,
  Unsubscribe,
  WriteRefusalReason,
  WriteSettlement,
} from 'ptykit/contracts'
import type { TerminalExitCause } from 'ptykit/exit-cause'

// The smallest provider: exactly the required members.
const minimal = {
  name: 'tiny',
  spawn: async (_options: ProviderSpawnOptions): Promise<PtySpawnResult> => ({ id: 'a' }),
  write: (_id: string, _data: string): WriteSettlement => ({ kind: 'accepted' }),
  resize: (_id: string, _cols: number, _rows: number): boolean => false,
  shutdown: async (_id: string): Promise<void> => undefined,
  listProcesses: async (): Promise<PtyProcessInfo[]> => [],
  onData: (_listener: (event: PtyDataEvent) => void): Unsubscribe => () => undefined,
  onExit: (_listener: (event: PtyExitEvent) => void): Unsubscribe => () => undefined,
}

describe('PtyProvider', () => {
  it('accepts an object with only the required members', () => {
    assertType<PtyProvider>(minimal)
  })

  it('requires name, spawn, write, resize, shutdown, listProcesses, onData and onExit', () => {
    type Required = {
      [K in keyof PtyProvider]-?: {} extends Pick<PtyProvider, K> ? never : K
    }[keyof PtyProvider]
    expectTypeOf<Required>().toEqualTypeOf<
      'name' | 'spawn' | 'write' | 'resize' | 'shutdown' | 'listProcesses' | 'onData' | 'onExit'
    >()
    const { shutdown: _s, ...withoutShutdown } = minimal
    // @ts-expect-error shutdown is required
    assertType<PtyProvider>(withoutShutdown)
    const { onExit: _e, ...withoutOnExit } = minimal
    // @ts-expect-error onExit is required
    assertType<PtyProvider>(withoutOnExit)
  })

  it('settles writes in three values, possibly synchronously', () => {
    expectTypeOf<PtyProvider['write']>().returns.toEqualTypeOf<WriteSettlement | Promise<WriteSettlement>>()
    const boolWriter = { ...minimal, write: (_id: string, _data: string): boolean => true }
    // @ts-expect-error a boolean write would hide an unverifiable settlement
    assertType<PtyProvider>(boolWriter)
  })

  it('writes raw bytes through an optional writeBytes of their own; write takes text only', () => {
    expectTypeOf<NonNullable<PtyProvider['writeBytes']>>().parameters.toEqualTypeOf<[string, Uint8Array]>()
    expectTypeOf<NonNullable<PtyProvider['writeBytes']>>().returns.toEqualTypeOf<WriteSettlement | Promise<WriteSettlement>>()
    expectTypeOf<PtyProvider['write']>().parameter(1).toEqualTypeOf<string>()
    // A provider written before writeBytes (the minimal one) is still a provider.
    assertType<PtyProvider>(minimal)
    expectTypeOf<'provider_cannot_write_bytes'>().toExtend<WriteRefusalReason>()
  })

  it('answers liveness in three values', () => {
    expectTypeOf<NonNullable<PtyProvider['hasPty']>>().returns.toEqualTypeOf<boolean | null>()
    expectTypeOf<NonNullable<PtyProvider['probeLiveness']>>().returns.toEqualTypeOf<Promise<boolean | null>>()
  })

  it('carries an optional branded incarnation and an optional cause on exits', () => {
    expectTypeOf<PtyExitEvent['incarnationId']>().toEqualTypeOf<PtyIncarnationId | undefined>()
    expectTypeOf<PtyExitEvent['cause']>().toEqualTypeOf<TerminalExitCause | undefined>()
    expectTypeOf<PtyExitEvent['code']>().toEqualTypeOf<number>()
    expectTypeOf<PtySpawnResult['incarnationId']>().toEqualTypeOf<PtyIncarnationId | undefined>()
  })

  it('returns an Unsubscribe from onData and onExit', () => {
    expectTypeOf<PtyProvider['onData']>().returns.toEqualTypeOf<Unsubscribe>()
    expectTypeOf<PtyProvider['onExit']>().returns.toEqualTypeOf<Unsubscribe>()
    expectTypeOf<Unsubscribe>().toEqualTypeOf<() => void>()
  })
})

describe('what a provider builds, and what the controller answers', () => {
  it('the provider side takes undefined for an absent optional field; the controller side does not', () => {
    const incarnationId = undefined as PtyIncarnationId | undefined
    const row = { id: 'a', hostId: 'local', cwd: null, title: 'sh', incarnationId }
    const snapshot = { data: '', cols: 80, rows: 24, seq: 0, source: 'mine', incarnationId }
    assertType<ProviderProcessInfo>(row)
    assertType<ProviderBufferSnapshot>(snapshot)
    assertType<PtyExitEvent>({ id: 'a', code: 0, incarnationId, cause: undefined })
    assertType<PtySpawnResult>({ id: 'a', incarnationId, providerSequence: undefined })
    // What the controller returns keeps the key absent, never `undefined`.
    // @ts-expect-error -- incarnationId: undefined is not a PtyProcessInfo field
    assertType<PtyProcessInfo>(row)
    // @ts-expect-error -- incarnationId: undefined is not a PtyProviderBufferSnapshot field
    assertType<PtyProviderBufferSnapshot>(snapshot)
    // A provider written before keeps compiling: its exact rows and snapshots are provider rows and snapshots.
    expectTypeOf<PtyProcessInfo>().toMatchTypeOf<ProviderProcessInfo>()
    expectTypeOf<PtyProviderBufferSnapshot>().toMatchTypeOf<ProviderBufferSnapshot>()
  })
})
