/**
 * A long write through the pty host (a big paste) is serialized and sent a few pieces per turn of
 * the app's event loop, not all on the caller's turn: 50 MB used to block the app's loop for
 * ~150–330 ms in one task (every piece `JSON.stringify`'d in the call, every frame encoded in one
 * flush). Checked by counting the large serializations on each turn, not by timing.
 */
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { PTY_HOST_FLUSH_BUDGET_CHARS } from '../../src/pty-host/pty-host-connection.js'
import { PTY_HOST_WRITE_PIECE_CHARS } from '../../src/pty-host/write-pieces.js'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()
afterEach(() => vi.restoreAllMocks())

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('pty host: a long write', () => {
  it('is serialized a few pieces per turn, in order, and reaches the program whole', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    let output = ''
    app.onData((event) => {
      output += event.data
    })
    const pieces = 12
    const text = Array.from({ length: pieces }, (_, i) => String.fromCharCode(0x61 + i).repeat(PTY_HOST_WRITE_PIECE_CHARS)).join('')
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', `stty raw -echo; echo READY; head -c ${text.length} | md5sum; sleep 60`] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    const stringify = JSON.stringify
    let large = 0
    vi.spyOn(JSON, 'stringify').mockImplementation(function (this: unknown, ...args: Parameters<typeof JSON.stringify>) {
      const json = stringify.apply(this, args)
      if (typeof json === 'string' && json.length >= PTY_HOST_WRITE_PIECE_CHARS) large += 1
      return json
    } as typeof JSON.stringify)
    const settlement = app.write(id, text)
    // Before: all 12 pieces were serialized on the caller's turn, and all sent in one flush.
    expect(large, 'pieces serialized on the calling turn').toBe(0)
    await nextTurn()
    const perTurn = Math.ceil(PTY_HOST_FLUSH_BUDGET_CHARS / PTY_HOST_WRITE_PIECE_CHARS)
    expect(large, 'pieces serialized by the first flush').toBeLessThanOrEqual(perTurn)
    expect(large).toBeGreaterThan(0)
    await nextTurn()
    expect(large, 'pieces serialized by the first two flushes').toBeLessThanOrEqual(2 * perTurn)
    expect(await settlement).toEqual({ kind: 'accepted' })
    expect(large).toBe(pieces)
    vi.restoreAllMocks()
    const expected = createHash('md5').update(text).digest('hex')
    await waitFor(() => (output.includes(expected) ? true : undefined), `the digest ${expected} of what the program read`, 60_000)
  }, 90_000)

  it('of bytes is encoded as it is sent too, from a copy (the caller may reuse its buffer at once)', async () => {
    const { socketPath } = await inProcessHost(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    let output = ''
    app.onData((event) => {
      output += event.data
    })
    const bytes = Buffer.alloc(10 * 1024 * 1024)
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = 0x41 + ((i >> 20) % 26)
    const expected = createHash('md5').update(bytes).digest('hex')
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', `stty raw -echo; echo READY; head -c ${bytes.length} | md5sum; sleep 60`] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'READY')
    const toBase64 = vi.spyOn(Buffer.prototype, 'toString')
    const settlement = app.writeBytes(id, bytes)
    const base64OnTheCall = toBase64.mock.calls.filter(([encoding]) => encoding === 'base64').length
    toBase64.mockRestore()
    // The caller reuses its buffer at once: what arrives is still what it wrote.
    bytes.fill(0x7a)
    expect(base64OnTheCall, 'pieces encoded on the calling turn').toBe(0)
    expect(await settlement).toEqual({ kind: 'accepted' })
    await waitFor(() => (output.includes(expected) ? true : undefined), `the digest ${expected} of what the program read`, 60_000)
  }, 90_000)
})
