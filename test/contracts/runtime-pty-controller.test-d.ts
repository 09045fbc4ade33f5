import { describe, it, expectTypeOf, assertType } from 'vitest'
import type { PtyController } from 'ptykit/controller'
import type {
  PtyBufferSerialization,
  PtyDisposable,
  PtyIncarnationId,
  PtySlotAdoption,
  PtySlotCreateRelease,
  PtyProcessInspection,
  PtySpawnReply,
  RuntimePtyController,
  TerminalInputKind,
  WriteSettlement,
} from 'ptykit/contracts'

// The smallest controller a host may implement: exactly the three required members.
const minimal = {
  write: (_ptyId: string, _data: string, _inputKind: TerminalInputKind): boolean => true,
  kill: (_ptyId: string): boolean => true,
  getForegroundProcess: async (_ptyId: string): Promise<string | null> => null,
}

describe('RuntimePtyController', () => {
  it('accepts an object with only write, kill and getForegroundProcess', () => {
    assertType<RuntimePtyController>(minimal)
  })

  it('requires each of write, kill and getForegroundProcess', () => {
    const { getForegroundProcess: _g, ...withoutForeground } = minimal
    const { write: _w, ...withoutWrite } = minimal
    const { kill: _k, ...withoutKill } = minimal
    // @ts-expect-error getForegroundProcess is required
    assertType<RuntimePtyController>(withoutForeground)
    // @ts-expect-error write is required
    assertType<RuntimePtyController>(withoutWrite)
    // @ts-expect-error kill is required
    assertType<RuntimePtyController>(withoutKill)
  })

  it('pins the required signatures', () => {
    expectTypeOf<RuntimePtyController['write']>().parameters.toEqualTypeOf<[string, string, TerminalInputKind]>()
    expectTypeOf<RuntimePtyController['write']>().returns.toEqualTypeOf<boolean>()
    expectTypeOf<RuntimePtyController['kill']>().toEqualTypeOf<(ptyId: string) => boolean>()
    expectTypeOf<RuntimePtyController['getForegroundProcess']>().returns.toEqualTypeOf<Promise<string | null>>()
  })

  it('rejects a write whose input kind is not a TerminalInputKind', () => {
    const controller: RuntimePtyController = minimal
    // @ts-expect-error 'typing' is not an input kind
    controller.write('pty', 'x', 'typing')
  })

  it('keeps every other member optional', () => {
    type Optional = {
      [K in keyof RuntimePtyController]-?: {} extends Pick<RuntimePtyController, K> ? K : never
    }[keyof RuntimePtyController]
    expectTypeOf<Exclude<keyof RuntimePtyController, Optional>>().toEqualTypeOf<'write' | 'kill' | 'getForegroundProcess'>()
    expectTypeOf<'spawn' | 'writeWithSettlement' | 'hasPty' | 'probePtyLiveness' | 'stopAndWait' | 'attach'>().toExtend<Optional>()
  })

  it('answers unsure questions in three values', () => {
    expectTypeOf<NonNullable<RuntimePtyController['hasPty']>>().returns.toEqualTypeOf<boolean | null>()
    expectTypeOf<NonNullable<RuntimePtyController['probePtyLiveness']>>().returns.toEqualTypeOf<Promise<boolean | null>>()
    expectTypeOf<NonNullable<RuntimePtyController['writeWithSettlement']>>().returns.toEqualTypeOf<
      WriteSettlement | Promise<WriteSettlement>
    >()
    expectTypeOf<NonNullable<RuntimePtyController['getSize']>>().returns.toEqualTypeOf<{ cols: number; rows: number } | null>()
    expectTypeOf<NonNullable<RuntimePtyController['getCwd']>>().returns.toEqualTypeOf<Promise<string | null>>()
    expectTypeOf<NonNullable<RuntimePtyController['inspectProcess']>>().returns.toEqualTypeOf<Promise<PtyProcessInspection>>()
  })

  it('fences retireRejectedPty by an incarnation id that may be absent', () => {
    expectTypeOf<NonNullable<RuntimePtyController['retireRejectedPty']>>().parameters.toEqualTypeOf<
      [string, boolean, PtyIncarnationId | undefined]
    >()
  })

  it('replies to spawn with a branded incarnation and a reattach flag', () => {
    expectTypeOf<NonNullable<RuntimePtyController['spawn']>>().returns.toEqualTypeOf<Promise<PtySpawnReply>>()
    expectTypeOf<PtySpawnReply['incarnationId']>().toEqualTypeOf<PtyIncarnationId | undefined>()
    expectTypeOf<PtySpawnReply['isReattach']>().toEqualTypeOf<boolean>()
  })

  it('has the seed’s foreground, input-mode, snapshot and slot members, with their unsure answers', () => {
    expectTypeOf<NonNullable<RuntimePtyController['confirmForegroundProcess']>>().returns.toEqualTypeOf<Promise<string | null>>()
    expectTypeOf<NonNullable<RuntimePtyController['confirmShellForeground']>>().returns.toEqualTypeOf<Promise<boolean>>()
    expectTypeOf<NonNullable<RuntimePtyController['supportsForegroundProcessEvidence']>>().returns.toEqualTypeOf<Promise<boolean>>()
    expectTypeOf<NonNullable<RuntimePtyController['resetInputModes']>>().returns.toEqualTypeOf<Promise<void>>()
    expectTypeOf<NonNullable<RuntimePtyController['serializeBuffer']>>().returns.toEqualTypeOf<Promise<PtyBufferSerialization | null>>()
    expectTypeOf<NonNullable<RuntimePtyController['registerRendererSerializer']>>().returns.toEqualTypeOf<PtyDisposable>()
    expectTypeOf<NonNullable<RuntimePtyController['waitForRendererSerializer']>>().returns.toEqualTypeOf<Promise<boolean>>()
    expectTypeOf<NonNullable<RuntimePtyController['claimSlotCreate']>>().returns.toEqualTypeOf<PtySlotCreateRelease>()
    expectTypeOf<NonNullable<RuntimePtyController['adoptSlot']>>().returns.toEqualTypeOf<Promise<PtySlotAdoption | null>>()
    // The default controller implements every one of them.
    expectTypeOf<PtyController>().toMatchTypeOf<Required<Omit<RuntimePtyController, 'spawn'>>>()
  })
})
