import { describe, expectTypeOf, it } from 'vitest'
import type { PtyIncarnationId, PtyStopAndWaitOptions, WriteSettlement } from 'ptykit/contracts'
import type {
  DisposableUnsubscribe,
  PtyController,
  PtyControllerDataEvent,
  PtyControllerErrorCode,
  PtyControllerExitEvent,
  PtyTerminal,
  PtyTerminalOutputOptions,
} from 'ptykit/controller'
import { OUTPUT_ITERATOR_MAX_QUEUED_CHARS } from 'ptykit/controller'
import type { TerminalExitCause } from 'ptykit/exit-cause'

declare const controller: PtyController

describe('PtyTerminal types', () => {
  it('infers every payload without annotations', async () => {
    const terminal = await controller.spawnTerminal({ cols: 80, rows: 24 })
    expectTypeOf(terminal).toEqualTypeOf<PtyTerminal>()
    expectTypeOf(controller.terminal('id')).toEqualTypeOf<PtyTerminal | null>()

    const off = terminal.onData((event) => {
      expectTypeOf(event).toEqualTypeOf<PtyControllerDataEvent>()
      expectTypeOf(event.data).toBeString()
      expectTypeOf(event.seq).toBeNumber()
    })
    expectTypeOf(off).toEqualTypeOf<DisposableUnsubscribe>()
    expectTypeOf(off).toBeCallableWith()
    expectTypeOf(off[Symbol.dispose]).toBeFunction()
    terminal.onExit((event) => {
      expectTypeOf(event.cause).toEqualTypeOf<TerminalExitCause>()
      expectTypeOf(event.code).toBeNumber()
    })
    expectTypeOf(terminal.exited).resolves.toEqualTypeOf<PtyControllerExitEvent>()

    for await (const chunk of terminal.output({ signal: AbortSignal.timeout(1) })) {
      expectTypeOf(chunk).toBeString()
    }
    expectTypeOf(terminal.output).parameter(0).toEqualTypeOf<PtyTerminalOutputOptions | undefined>()
    expectTypeOf<PtyTerminalOutputOptions['maxQueuedChars']>().toEqualTypeOf<number | undefined>()
    expectTypeOf(OUTPUT_ITERATOR_MAX_QUEUED_CHARS).toBeNumber()
    expectTypeOf<PtyControllerErrorCode>().extract<'output_overrun'>().toEqualTypeOf<'output_overrun'>()
    // @ts-expect-error -- the bound is a count
    terminal.output({ maxQueuedChars: '8M' })

    expectTypeOf(terminal.id).toBeString()
    expectTypeOf(terminal.pid).toEqualTypeOf<number | undefined>()
    expectTypeOf(terminal.incarnationId).toEqualTypeOf<PtyIncarnationId | undefined>()
    expectTypeOf(terminal.cols).toBeNumber()
    expectTypeOf(terminal.write('ls\r')).toBeBoolean()
    expectTypeOf(terminal.writeWithSettlement('ls\r', 'launch')).toEqualTypeOf<WriteSettlement | Promise<WriteSettlement>>()
    expectTypeOf(terminal.stop).parameter(0).toEqualTypeOf<PtyStopAndWaitOptions | undefined>()
    expectTypeOf(terminal.stop({ timeoutMs: 1_000, signal: AbortSignal.timeout(1) })).resolves.toBeBoolean()
    expectTypeOf(terminal[Symbol.asyncDispose]).returns.resolves.toBeVoid()

    // @ts-expect-error -- the input kind is checked
    terminal.write('x', 'typing')

    // Raw bytes: a Uint8Array (a Buffer is one), on the handle and the controller; nothing else.
    expectTypeOf(terminal.write(new Uint8Array([0x80]))).toBeBoolean()
    expectTypeOf(terminal.writeWithSettlement(Buffer.from([0xff]), 'driving')).toEqualTypeOf<WriteSettlement | Promise<WriteSettlement>>()
    expectTypeOf(controller.write(terminal.id, new Uint8Array([0x80]), 'driving')).toBeBoolean()
    expectTypeOf(controller.writeWithSettlement).parameter(1).toEqualTypeOf<string | Uint8Array>()
    // @ts-expect-error -- an array of byte values is not bytes
    terminal.write([0x80])
    // @ts-expect-error -- nor is an ArrayBuffer
    controller.write(terminal.id, new ArrayBuffer(1), 'driving')
  })

  it('carries the size on the spawn event', () => {
    controller.on('spawn', (event) => {
      expectTypeOf(event.cols).toBeNumber()
      expectTypeOf(event.rows).toBeNumber()
    })
  })
})
