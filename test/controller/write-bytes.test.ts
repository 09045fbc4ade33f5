/**
 * Raw bytes through the controller (`write`, `writeWithSettlement`, a terminal handle's `write`):
 * a `Uint8Array` goes to the provider's `writeBytes` exactly as given, in order with string writes;
 * a provider without `writeBytes` (written before providers could take bytes: its `write` takes
 * text) is never handed them — the write is refused `provider_cannot_write_bytes`, nothing written;
 * anything that is neither a string nor a `Uint8Array` is a `TypeError` naming `data` and the value.
 */
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { refusedWrite, toPtyIncarnationId, unverifiableWrite, type PtyProvider } from '../../src/contracts/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { createHarness } from './controller-harness.js'

/** Every byte value, 0x00 to 0xFF. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i)

describe('bytes through the controller', () => {
  it('hands all 256 byte values to the provider exactly, in order with string writes (write, writeWithSettlement, a handle)', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    expect(h.controller.write(terminal.id, 'a\r', 'driving')).toBe(true)
    expect(h.controller.write(terminal.id, ALL_BYTES, 'driving')).toBe(true)
    expect(h.controller.writeWithSettlement(terminal.id, 'é', 'query-reply')).toEqual({ kind: 'accepted' })
    expect(h.controller.writeWithSettlement(terminal.id, Buffer.from([0xff, 0x00, 0x80]), 'driving')).toEqual({ kind: 'accepted' })
    expect(terminal.write(new Uint8Array([0x1b, 0x5b, 0x4d, 0x20, 0xe0, 0x21]))).toBe(true)
    expect(terminal.writeWithSettlement('z')).toEqual({ kind: 'accepted' })
    const expected = Buffer.concat([Buffer.from('a\r'), ALL_BYTES, Buffer.from('é', 'utf8'), Buffer.from([0xff, 0x00, 0x80]), Buffer.from([0x1b, 0x5b, 0x4d, 0x20, 0xe0, 0x21]), Buffer.from('z')])
    const pty = h.provider.getPty(terminal.id)!
    expect(Buffer.from(pty.writtenBytes).equals(expected)).toBe(true)
    // Strings to `write`, bytes to `writeBytes`: never bytes to a `write` that takes text.
    expect(h.provider.calls.filter((call) => call.method === 'write').map((call) => call.args[1])).toEqual(['a\r', 'é', 'z'])
    expect(h.provider.calls.filter((call) => call.method === 'writeBytes')).toHaveLength(3)
    expect(pty.writes.map((write) => write.bytes === undefined)).toEqual([true, false, true, false, false, true])
  })

  it('reads the bytes during the call: a caller that reuses its buffer afterwards does not change what was written', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const buffer = Buffer.from([1, 2, 3])
    expect(h.controller.write(id, buffer, 'driving')).toBe(true)
    buffer.fill(9)
    expect([...h.provider.getPty(id)!.writtenBytes]).toEqual([1, 2, 3])
  })

  it('takes a Uint8Array made in another realm (a vm context), where instanceof says no', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const foreign = runInNewContext('new Uint8Array([0x80, 0x81])') as Uint8Array
    expect(foreign instanceof Uint8Array).toBe(false)
    expect(h.controller.writeWithSettlement(id, foreign, 'driving')).toEqual({ kind: 'accepted' })
    expect([...h.provider.getPty(id)!.writtenBytes]).toEqual([0x80, 0x81])
  })

  it('refuses bytes to unknown, exited, fenced PTYs and after dispose, as strings, without touching the provider', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    expect(h.controller.writeWithSettlement(id, ALL_BYTES, 'driving', { expectedIncarnationId: toPtyIncarnationId('old') })).toEqual(refusedWrite('stale_incarnation'))
    expect(h.controller.writeWithSettlement('nope', ALL_BYTES, 'driving')).toEqual(refusedWrite('pty_not_found'))
    h.provider.emitExit(id, { exitCode: 0 })
    expect(h.controller.writeWithSettlement(id, ALL_BYTES, 'driving')).toEqual(refusedWrite('pty_exited'))
    expect(h.controller.write(id, ALL_BYTES, 'driving')).toBe(false)
    await h.controller.dispose()
    expect(h.controller.writeWithSettlement(id, ALL_BYTES, 'driving')).toEqual(refusedWrite('controller_disposed'))
    expect(h.provider.calls.filter((call) => call.method === 'writeBytes')).toEqual([])
  })

  it('passes the provider\'s settlement of bytes through; a throwing writeBytes is unverifiable and reported naming writeBytes', async () => {
    const h = createHarness()
    h.provider.scriptNextSpawn({ writeSettlement: refusedWrite('provider_refused_write') })
    const { id } = await h.controller.spawn({})
    expect(h.controller.writeWithSettlement(id, ALL_BYTES, 'driving')).toEqual(refusedWrite('provider_refused_write'))
    h.provider.writeBytes = () => {
      throw new Error('socket closed')
    }
    expect(h.controller.writeWithSettlement(id, ALL_BYTES, 'driving')).toEqual(unverifiableWrite('provider_threw_after_handoff', true))
    expect(h.errors().map((error) => error.message)).toEqual(['Provider fake threw from writeBytes'])
  })

  it('returns an async settlement of bytes as a promise, and write() answers true once they were handed over', async () => {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    const provider: PtyProvider = {
      ...fake,
      writeBytes: async (id, bytes) => fake.writeBytes(id, bytes),
      onData: (listener) => fake.onData(listener),
      onExit: (listener) => fake.onExit(listener),
      spawn: (options) => fake.spawn(options),
    }
    const controller = createPtyController({ provider, clock: createManualClock() })
    const { id } = await controller.spawn({})
    await expect(controller.writeWithSettlement(id, ALL_BYTES, 'driving')).resolves.toEqual({ kind: 'accepted' })
    expect(controller.write(id, new Uint8Array([0xff]), 'driving')).toBe(true)
    expect([...fake.getPty(id)!.writtenBytes].slice(-1)).toEqual([0xff])
  })
})

describe('a provider without writeBytes (written before providers could take bytes)', () => {
  /** A fake whose `writeBytes` is left out, as a provider that predates it; strings still go to its `write`. */
  function textOnly() {
    const fake = createFakePtyProvider({ scheduling: 'manual' })
    const { writeBytes: _writeBytes, ...provider } = fake
    const controller = createPtyController({ provider, clock: createManualClock() })
    return { fake, controller }
  }

  it('gets no bytes: the write is refused provider_cannot_write_bytes and write() answers false; nothing is written, not as text either', async () => {
    const { fake, controller } = textOnly()
    const terminal = await controller.spawnTerminal({})
    expect(controller.writeWithSettlement(terminal.id, ALL_BYTES, 'driving')).toEqual(refusedWrite('provider_cannot_write_bytes'))
    expect(controller.write(terminal.id, Buffer.from([0xe0]), 'driving')).toBe(false)
    expect(terminal.write(new Uint8Array([1]))).toBe(false)
    expect(terminal.writeWithSettlement(new Uint8Array([1]))).toEqual(refusedWrite('provider_cannot_write_bytes'))
    expect(fake.calls.filter((call) => call.method === 'write' || call.method === 'writeBytes')).toEqual([])
    // Its strings go through as before.
    expect(controller.write(terminal.id, 'ls\r', 'driving')).toBe(true)
    expect(fake.getPty(terminal.id)!.written).toBe('ls\r')
  })
})

describe('write data that is neither a string nor a Uint8Array', () => {
  const notData: [string, unknown, RegExp][] = [
    ['a number', 42, /got 42 \(number\)$/],
    ['an array of byte values', [1, 2], /got \[1,2\] \(array\)$/],
    ['null', null, /got null \(null\)$/],
    ['an ArrayBuffer', new ArrayBuffer(2), /got ArrayBuffer of 2 bytes \(ArrayBuffer\)$/],
    ['a Uint16Array', new Uint16Array([1]), /got Uint16Array of 2 bytes \(Uint16Array\)$/],
    ['a DataView', new DataView(new ArrayBuffer(1)), /got DataView of 1 byte \(DataView\)$/],
    ['an object that claims to be one', { [Symbol.toStringTag]: 'Uint8Array', length: 1, 0: 1 }, /\(object\)$/],
  ]

  it.each(notData)('is a TypeError naming `data` and the value (%s), from the controller and a handle; nothing is written', async (_name, data, shown) => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const message = /^Expected the `data` argument to be a string or a Uint8Array \(a Buffer is one\), got /
    for (const call of [
      () => h.controller.write(terminal.id, data as never, 'driving'),
      () => h.controller.writeWithSettlement(terminal.id, data as never, 'driving'),
      () => terminal.write(data as never),
      () => terminal.writeWithSettlement(data as never),
    ]) {
      expect(call).toThrow(TypeError)
      expect(call).toThrow(message)
      expect(call).toThrow(shown)
    }
    expect(h.provider.calls.filter((call) => call.method === 'write' || call.method === 'writeBytes')).toEqual([])
    expect(h.provider.getPty(terminal.id)!.writtenBytes).toHaveLength(0)
  })

  it('a bytes write still checks its input kind', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    expect(() => h.controller.write(id, ALL_BYTES, 'typing' as never)).toThrow(/`inputKind` argument .* got "typing"/)
    expect(h.provider.calls.filter((call) => call.method === 'writeBytes')).toEqual([])
  })
})
