// A provider written against the contract by someone who never read it: events the controller
// cannot read are dropped (nothing crashes, nothing reaches a record), and said so on `error` as
// `provider_event_malformed`, naming the provider, the event and what was wrong, once per provider,
// event and field.
import { describe, expect, it } from 'vitest'
import type { PtyBytesEvent, PtyDataEvent, PtyExitEvent, PtyOutputLossEvent } from '../../src/contracts/index.js'
import { createPtyController, isPtyControllerError, type PtyControllerError } from '../../src/controller/index.js'
import { fakeWithTestDrivenEvents } from '../support/test-driven-events.js'

/** The fake provider, with every event channel driven by the test (anything may be emitted). */
function handWrittenProvider() {
  const { fake, provider, channels } = fakeWithTestDrivenEvents()
  const emit = {
    data: (event: unknown) => channels.data.fire(event as PtyDataEvent),
    bytes: (event: unknown) => channels.bytes.fire(event as PtyBytesEvent),
    loss: (event: unknown) => channels.loss.fire(event as PtyOutputLossEvent),
    exit: (event: unknown) => channels.exits.fire(event as PtyExitEvent),
  }
  return { fake, provider, emit }
}

describe('malformed provider events', () => {
  it('are dropped and reported on error, once per provider, event and field, naming what was wrong', async () => {
    const { provider, emit } = handWrittenProvider()
    const controller = createPtyController({ provider })
    const errors: PtyControllerError[] = []
    const output: string[] = []
    controller.on('error', (error) => errors.push(error))
    controller.on('data', (event) => output.push(event.data))
    const reply = await controller.spawn({})

    // The classic: Buffer chunks where the contract says strings. Before: dropped in silence, and
    // the host saw a terminal that printed nothing.
    emit.data({ id: reply.id, data: Buffer.from('hello'), incarnationId: reply.incarnationId })
    emit.data({ id: reply.id, data: Buffer.from('again'), incarnationId: reply.incarnationId })
    emit.data({ data: 'no id' })
    emit.data(null)
    emit.bytes({ id: reply.id, bytes: 'text', incarnationId: reply.incarnationId })
    emit.loss({ id: reply.id, fromSeq: 5, toSeq: 5, incarnationId: reply.incarnationId })
    emit.exit({ code: 0 })
    emit.exit('exited')

    expect(output).toEqual([])
    expect(errors.every((error) => isPtyControllerError(error) && error.code === 'provider_event_malformed')).toBe(true)
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringMatching(/^Provider hand-written emitted a data event whose data is Uint8Array of \d+ bytes \(Uint8Array\), not a string; it was dropped/),
      expect.stringMatching(/^Provider hand-written emitted a data event whose id is undefined \(undefined\), not a non-empty string/),
      expect.stringMatching(/^Provider hand-written emitted a data event that is null \(null\), not an event object/),
      expect.stringMatching(/^Provider hand-written emitted a bytes event whose bytes is "text" \(string\), not a Uint8Array/),
      expect.stringMatching(/^Provider hand-written emitted an outputLoss event whose range is \{"fromSeq":5,"toSeq":5\} \(object\), not safe integers/),
      expect.stringMatching(/^Provider hand-written emitted an exit event whose id is undefined/),
      expect.stringMatching(/^Provider hand-written emitted an exit event that is "exited" \(string\), not an event object/),
    ])
    expect(errors[0]?.ptyId).toBe(reply.id)
    expect(errors[1]?.ptyId).toBeUndefined()

    // Well-formed events still flow, and the PTY is untouched by the malformed exits.
    emit.data({ id: reply.id, data: 'fine', incarnationId: reply.incarnationId })
    expect(output).toEqual(['fine'])
    expect(controller.hasPty(reply.id)).toBe(true)
    await controller.dispose()
  })

  it('never throw into the provider without an error listener', async () => {
    const { provider, emit } = handWrittenProvider()
    const controller = createPtyController({ provider })
    const reply = await controller.spawn({})
    expect(() => emit.data({ id: reply.id, data: 42 })).not.toThrow()
    expect(() => emit.exit(undefined)).not.toThrow()
    expect(controller.hasPty(reply.id)).toBe(true)
    await controller.dispose()
  })
})
