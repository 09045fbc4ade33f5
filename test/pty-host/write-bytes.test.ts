/**
 * Raw bytes through the pty host: the app sends them as a `writeBytes` request (base64 in the
 * JSON), the host writes them to the PTY as they are, in order with text writes — through a real
 * host process, and in pieces when a write is longer than the host's frames allow. A host of an
 * older ptykit (its welcome does not list `writeBytes`) is never sent bytes: the write is refused
 * `provider_cannot_write_bytes`, nothing reaches its PTY, and its sessions still take text.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController } from 'ptykit/controller'
import { createPtyHostProvider } from 'ptykit/pty-host'
import { PTY_HOST_METHODS } from '../../src/pty-host/protocol.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { bytesReadFrom, RAW_HEX_READER } from '../support/raw-hex-reader.js'
import { olderHostInFrontOf } from './older-host-proxy.js'
import { controllerOnOwnHost, inProcessHost, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** Every byte value, 0x00 to 0xFF. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i)

/** A controller's output of each PTY, as it arrives. */
function outputOf(controller: PtyController): (id: string) => string {
  const output = new Map<string, string>()
  controller.on('data', ({ ptyId, data }) => output.set(ptyId, (output.get(ptyId) ?? '') + data))
  return (id) => output.get(id) ?? ''
}

/** What the raw hex reader of `id` has read, once it holds at least `length` bytes. */
function readAtLeast(output: (id: string) => string, id: string, length: number): Promise<Buffer> {
  return waitFor(() => {
    const read = bytesReadFrom(output(id))
    return read !== undefined && read.length >= length ? read : undefined
  }, `${length} bytes read by the program`, 20_000)
}

describe('pty host: writes of bytes', () => {
  it('a real host process writes all 256 byte values exactly, in order with text (controller write, writeWithSettlement, a handle)', async () => {
    const { controller } = controllerOnOwnHost(cleanups)
    const output = outputOf(controller)
    const terminal = await controller.spawnTerminal(RAW_HEX_READER)
    await waitFor(() => (output(terminal.id).includes('READY') ? true : undefined), 'READY', 15_000)
    const reversed = Buffer.from(ALL_BYTES).reverse()
    const expected = Buffer.concat([Buffer.from('<é🙂|'), ALL_BYTES, Buffer.from('|\r\n|'), reversed, Buffer.from('|ü>'), Buffer.from([0xff, 0x80])])
    expect(controller.write(terminal.id, '<é🙂|', 'driving')).toBe(true)
    await expect(controller.writeWithSettlement(terminal.id, ALL_BYTES, 'driving')).resolves.toEqual({ kind: 'accepted' })
    expect(controller.write(terminal.id, '|\r\n|', 'driving')).toBe(true)
    const buffer = Buffer.from(reversed)
    expect(controller.write(terminal.id, buffer, 'driving')).toBe(true)
    buffer.fill(0) // reused by the caller once the write returned: already encoded for the host
    expect(terminal.write('|ü>')).toBe(true)
    await expect(terminal.writeWithSettlement(new Uint8Array([0xff, 0x80]))).resolves.toEqual({ kind: 'accepted' })
    const got = await readAtLeast(output, terminal.id, expected.length)
    expect(got.toString('hex')).toBe(expected.toString('hex'))
    expect(await terminal.stop({ timeoutMs: 5_000 })).toBe(true)
  })

  it('a write of bytes longer than a frame of the host allows goes as pieces, in order, settled as one', async () => {
    // A host that takes frames of at most 4 KiB: a piece carries ~2 KiB of bytes.
    const { socketPath } = await inProcessHost(cleanups, { maxFrameBytes: 4096 })
    const provider = createPtyHostProvider({ socketPath, autoStart: false })
    const controller = createPtyController({ provider })
    cleanups.push(() => provider.dispose(), () => controller.dispose())
    const output = outputOf(controller)
    const { id } = await controller.spawn(RAW_HEX_READER)
    await waitFor(() => (output(id).includes('READY') ? true : undefined), 'READY', 15_000)
    const big = Buffer.alloc(64 * 1024)
    for (let i = 0; i < big.length; i += 1) big[i] = (i * 31 + (i >> 8)) & 0xff
    const writes = [controller.writeWithSettlement(id, 'head|', 'driving'), controller.writeWithSettlement(id, big, 'driving'), controller.writeWithSettlement(id, '|tail', 'driving')]
    expect(await Promise.all(writes)).toEqual([{ kind: 'accepted' }, { kind: 'accepted' }, { kind: 'accepted' }])
    const expected = Buffer.concat([Buffer.from('head|'), big, Buffer.from('|tail')])
    const got = await readAtLeast(output, id, expected.length)
    expect(got.length).toBe(expected.length)
    expect(got.equals(expected)).toBe(true)
    expect(await controller.stopAndWait(id, { timeoutMs: 5_000 })).toBe(true)
  })

  it('the host refuses a writeBytes request whose bytes are not base64 (invalid_option naming `bytes`), and fences it by incarnation as a write', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    const spawned = await client.request('spawn', { sessionId: 'term-1', ...RAW_HEX_READER })
    const { incarnationId } = spawned.result as { incarnationId: string }
    for (const bytes of [undefined, 42, 'not base64!', 'QUJD=', 'QQ']) {
      const reply = await client.request('writeBytes', { ptyId: 'term-1', bytes, expectedIncarnationId: incarnationId })
      expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_option', option: 'bytes', message: expect.stringMatching(/^Expected the `bytes` option to be bytes as base64 text, got /) } })
    }
    const stale = await client.request('writeBytes', { ptyId: 'term-1', bytes: Buffer.from([0xff]).toString('base64'), expectedIncarnationId: 'an-earlier-incarnation' })
    expect(stale.result).toEqual({ kind: 'refused', reason: 'stale_incarnation' })
    const own = await client.request('writeBytes', { ptyId: 'term-1', bytes: Buffer.from([0x80, 0x00, 0xfe]).toString('base64'), expectedIncarnationId: incarnationId })
    expect(own.result).toEqual({ kind: 'accepted' })
    expect(client.closed).toBe(false)
  })

  it('the host refuses a write request whose data is no string (invalid_option naming `data`), not writes "" and answers accepted', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    const spawned = await client.request('spawn', { sessionId: 'term-1', ...RAW_HEX_READER })
    const { incarnationId } = spawned.result as { incarnationId: string }
    for (const data of [undefined, 42, [0x61], { bytes: 'YQ==' }]) {
      const reply = await client.request('write', { ptyId: 'term-1', data, expectedIncarnationId: incarnationId })
      expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_option', option: 'data', message: expect.stringMatching(/^Expected the `data` option to be a string \(bytes go in a writeBytes request\), got /) } })
    }
    const own = await client.request('write', { ptyId: 'term-1', data: 'a', expectedIncarnationId: incarnationId })
    expect(own.result).toEqual({ kind: 'accepted' })
    expect(client.closed).toBe(false)
  })
})

/**
 * A host of an older ptykit, made of a real host behind a proxy: its welcome lists the methods as
 * such a host does (`methods` without `writeBytes`; none at all for ptykit 0.1.0), and like such a
 * host it drops the connection of a client that calls a method it does not know. (Its `write`
 * reads `data` as text and writes `''` for anything else: why bytes go in a method of their own,
 * never in a field of `write`.)
 */
async function olderHost(welcomeMethods: readonly string[] | undefined): Promise<{ socketPath: string; methodsSent: string[]; dropped: () => boolean }> {
  const real = await inProcessHost(cleanups)
  const methodsSent: string[] = []
  let dropped = false
  const known = new Set(welcomeMethods ?? PTY_HOST_METHODS.filter((method) => method !== 'exits' && method !== 'writeBytes'))
  const { socketPath } = await olderHostInFrontOf(cleanups, real.socketPath, {
    welcome(welcome) {
      if (welcomeMethods === undefined) delete welcome['methods']
      else welcome['methods'] = welcomeMethods
    },
    onAppMessage(message) {
      if (message.type !== 'request' && message.type !== 'notify') return 'forward'
      methodsSent.push(String(message.method))
      if (known.has(String(message.method))) return 'forward'
      // What an older host does with a method it does not know.
      dropped = true
      return 'drop-connection'
    },
  })
  return { socketPath, methodsSent, dropped: () => dropped }
}

describe('pty host: an older host, still running the users\' sessions', () => {
  const olderMethods = PTY_HOST_METHODS.filter((method) => method !== 'writeBytes')

  it.each([
    ['a host that lists its methods, without writeBytes', olderMethods],
    ['a host of ptykit 0.1.0, which lists none', undefined],
  ] as const)('%s: bytes are refused provider_cannot_write_bytes at once, nothing is sent or written; text still goes through', async (_name, methods) => {
    const host = await olderHost(methods)
    const provider = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false })
    const controller = createPtyController({ provider })
    cleanups.push(() => provider.dispose(), () => controller.dispose())
    const output = outputOf(controller)
    const terminal = await controller.spawnTerminal(RAW_HEX_READER)
    await waitFor(() => (output(terminal.id).includes('READY') ? true : undefined), 'READY', 15_000)
    // Synchronous refusals: nothing was handed to the host, so `write` can say so.
    expect(controller.writeWithSettlement(terminal.id, ALL_BYTES, 'driving')).toEqual({ kind: 'refused', reason: 'provider_cannot_write_bytes' })
    expect(controller.write(terminal.id, Buffer.from([0xe0, 0x21]), 'driving')).toBe(false)
    expect(terminal.write(new Uint8Array([0x80]))).toBe(false)
    expect(provider.writeBytes(terminal.id, ALL_BYTES)).toEqual({ kind: 'refused', reason: 'provider_cannot_write_bytes' })
    expect(controller.write(terminal.id, 'text|é', 'driving')).toBe(true)
    const got = await readAtLeast(output, terminal.id, Buffer.byteLength('text|é'))
    // Only the text, and nothing after it (the refused bytes never went anywhere).
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(bytesReadFrom(output(terminal.id))?.toString('utf8')).toBe('text|é')
    expect(got.toString('utf8')).toBe('text|é')
    expect(host.methodsSent).not.toContain('writeBytes')
    expect(host.dropped()).toBe(false)
    expect(provider.connected).toBe(true)
    expect(await terminal.stop({ timeoutMs: 5_000 })).toBe(true)
  })
})
