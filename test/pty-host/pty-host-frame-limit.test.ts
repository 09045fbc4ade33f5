/**
 * The frame limit of the pty host's protocol: both sides drop a connection that sends a frame
 * over it (and every PTY on it becomes unverifiable). A large write (a paste, a file piped in) must
 * reach the program whole, in order, and a snapshot of a large colourful screen must come back,
 * without costing the app its connection.
 */
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { WriteSettlement } from 'ptykit/contracts'
import type { Socket } from 'node:net'
import { FrameDecoder, PTY_HOST_MAX_FRAME_BYTES } from '../../src/pty-host/frame-codec.js'
import { HostClient } from '../../src/pty-host/host-client.js'
import { snapshotWithinFrame } from '../../src/pty-host/host-request-handlers.js'
import { bytePieces, combinePieceSettlements, PTY_HOST_WRITE_PIECE_BYTES, PTY_HOST_WRITE_PIECE_CHARS, textPieces, writePieceBytesFor, writePieceCharsFor } from '../../src/pty-host/write-pieces.js'
import { isPtyHostError, startPtyHost } from 'ptykit/pty-host'
import { createPtyController } from 'ptykit/controller'
import { isPtySpawnError } from 'ptykit/spawn'
import { waitFor } from '../node-pty/pty-test-support.js'
import { inProcessHost as startInProcessHost, killHostAndClean, makeSocketDir, providerDisposedAfter, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host: a write larger than a frame', () => {
  it('reaches the program whole and in order, and the connection and the other PTYs carry on', async () => {
    const { socketPath } = await startInProcessHost(cleanups)
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    const output = new Map<string, string>()
    app.onData((event) => output.set(event.id, (output.get(event.id) ?? '') + event.data))
    const bystander = await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 60'] })
    // 20 MiB of text, then 3 Mi control characters (6 bytes each in JSON: 18 MiB as one frame).
    const text = 'a'.repeat(20 * 1024 * 1024)
    const controls = '\u0001'.repeat(3 * 1024 * 1024)
    const total = text.length + controls.length
    const sink = await app.spawn({ file: '/bin/sh', args: ['-c', `stty raw -echo; echo READY; head -c ${total} | md5sum; sleep 60`] })
    await waitFor(() => ((output.get(sink.id) ?? '').includes('READY') ? true : undefined), 'the sink to be ready')
    // Before: each was one frame over 16 MiB; the host dropped the app's connection, and both
    // writes settled unverifiable/transport_lost with every PTY of the app unverifiable.
    expect(await app.write(sink.id, text)).toEqual({ kind: 'accepted' })
    expect(await app.write(sink.id, controls)).toEqual({ kind: 'accepted' })
    // Every byte, in order: the program's digest of what it read is the digest of the two writes.
    const expected = createHash('md5').update(text).update(controls).digest('hex')
    await waitFor(() => ((output.get(sink.id) ?? '').includes(expected) ? true : undefined), `the digest ${expected} of what the sink read`, 60_000)
    expect(app.hasPty(bystander.id)).toBe(true)
    expect(await app.write(bystander.id, 'x')).toEqual({ kind: 'accepted' })
  }, 90_000)
})

describe('pty host: a host that accepts only small frames', () => {
  it('is sent writes in pieces its welcome allows, and no larger call', async () => {
    const { socketPath } = await startInProcessHost(cleanups, { maxFrameBytes: 256 * 1024 })
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    let output = ''
    app.onData((event) => {
      output += event.data
    })
    const text = 'b'.repeat(1024 * 1024)
    const sink = await app.spawn({ file: '/bin/sh', args: ['-c', `stty raw -echo; echo READY; head -c ${text.length} | md5sum; sleep 60`] })
    await waitFor(() => (output.includes('READY') ? true : undefined), 'the sink to be ready')
    // 1 MiB in one frame is over this host's 256 KiB: it would drop the connection.
    expect(await app.write(sink.id, text)).toEqual({ kind: 'accepted' })
    const expected = createHash('md5').update(text).digest('hex')
    await waitFor(() => (output.includes(expected) ? true : undefined), 'the digest of what the sink read', 30_000)
    expect(app.hasPty(sink.id)).toBe(true)
    // Any other call that large fails alone, before anything is sent (before: the host dropped the
    // connection, and the sink with every other PTY of the app became unverifiable). A spawn names
    // its largest part as the refused option (before: `invalid_option` naming nothing, which the
    // pipeline reported as `provider_spawn_failed`).
    const env = { BIG: 'x'.repeat(300 * 1024) }
    const refused = await app.spawn({ file: '/bin/sh', env }).catch((error: unknown) => error)
    // The env is not kept on the error: its values may be secrets, and errors get logged whole.
    expect(isPtyHostError(refused) && [refused.code, refused.option, refused.value]).toEqual(['invalid_spawn_option', 'env', undefined])
    expect((refused as Error).message).toMatch(/^The spawn request \(\d+ bytes\) is larger than the pty host accepts in a frame \(262144 bytes\); its largest part is `env` \(\d+ bytes\); nothing was sent$/)
    const controller = createPtyController({ provider: app })
    cleanups.push(() => controller.dispose())
    const viaController = await controller.spawn({ file: '/bin/sh', env }).catch((error: unknown) => error)
    expect(isPtySpawnError(viaController) && [viaController.code, viaController.option, viaController.outcome]).toEqual(['invalid_spawn_options', 'env', 'not_started'])
    // Named as the provider's option (the pipeline tells a controller's caller `slot.key` for
    // `slotKey`), and a session id too large is the `sessionId` option, also when the spawn first
    // asks to attach to it (see session-id-bytes.test.ts).
    const huge = 'k'.repeat(300 * 1024)
    for (const [options, option] of [
      [{ file: '/bin/sh', slotKey: huge }, 'slotKey'],
      [{ file: '/bin/sh', claimKey: huge }, 'claimKey'],
      [{ file: '/bin/sh', sessionId: huge, isNewSession: true }, 'sessionId'],
      [{ file: '/bin/sh', sessionId: huge }, 'sessionId'],
      [{ sessionId: huge, attachOnly: true }, 'sessionId'],
    ] as const) {
      const refusal = await app.spawn(options).catch((error: unknown) => error)
      expect(isPtyHostError(refusal) && [refusal.code, refusal.option, refusal.value === huge]).toEqual(['invalid_spawn_option', option, true])
      // A session id is refused before the frame is measured: no output frame could carry it.
      expect((refusal as Error).message).toContain(option === 'sessionId' ? 'option to be a non-empty string of at most 65535 UTF-8 bytes' : `its largest part is \`${option}\``)
    }
    const hugeId = await controller.spawn({ file: '/bin/sh', sessionId: huge }).catch((error: unknown) => error)
    expect(isPtySpawnError(hugeId) && [hugeId.code, hugeId.option, hugeId.outcome]).toEqual(['invalid_spawn_options', 'sessionId', 'not_started'])
    expect(app.hasPty(huge)).not.toBe(true)
    expect(app.hasPty(sink.id)).toBe(true)
    expect(await app.write(sink.id, 'x')).toEqual({ kind: 'accepted' })
  }, 60_000)
})

describe('pty host: a snapshot larger than a frame', () => {
  it.each([false, true])('comes back with the latest scrollback rows that fit, and the connection and the other PTYs carry on (one long wrapped line: %s)', async (wrapped) => {
    const { socketPath } = await startInProcessHost(cleanups, { scrollbackRows: 1_000, historyChars: 64 * 1024 * 1024, screenCharsPerSecond: 1_000_000_000 })
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    let tail = ''
    app.onData((event) => {
      tail = (tail + event.data).slice(-200)
    })
    const bystander = await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 60'] })
    // 1 100 lines of 500 true-colour cells (two SGRs each, ~50 bytes a cell as JSON): the whole
    // screen with its 1 000 scrollback rows serializes to ~25 MiB of JSON.
    const script = [
      `const WRAPPED = ${String(wrapped)}`,
      "let out = ''",
      'for (let y = 0; y < 1100; y++) {',
      "  for (let x = 0; x < 500; x++) out += `\x1b[38;2;${(x * 7) % 256};${(y * 3) % 256};${(x + y) % 256}m\x1b[48;2;${(x * 5) % 256};${(y * 11) % 256};${(x * y) % 256}m${String.fromCharCode(65 + (x % 26))}`",
      "  out += `\x1b[0m line ${y}${WRAPPED ? ' ' : '\\r\\n'}`",
      '}',
      "process.stdout.write(out + 'DONE\\r\\n', () => setTimeout(() => {}, 60000))",
    ].join('\n')
    const { id } = await app.spawn({ file: process.execPath, args: ['-e', script], cols: 520, rows: 50 })
    await waitFor(() => (tail.includes('DONE') ? true : undefined), 'the output to end', 30_000)
    // Before: the reply was one frame of ~25 MiB; the app dropped the connection, the snapshot
    // answered null, and the bystander's hasPty answered null until the reconnect.
    const snapshot = await waitFor(async () => {
      const taken = await app.getBufferSnapshot(id, { scrollbackRows: 1_000 })
      return taken !== null && taken.data.includes('DONE') ? taken : undefined
    }, 'a snapshot of the whole output', 30_000)
    expect(snapshot.data).toContain('line 1099')
    // Fewer scrollback rows than asked: the latest that fit (line 60 of the 1 100 is among the
    // oldest the screen kept, and it is gone from the snapshot). Wrapped, the whole output is one
    // line of the serialization: the rows to keep are halved all the same.
    expect(snapshot.data).not.toContain('line 60 ')
    expect(snapshot.data).not.toContain('line 60\r')
    expect(Buffer.byteLength(JSON.stringify(snapshot.data))).toBeLessThanOrEqual(PTY_HOST_MAX_FRAME_BYTES)
    expect(app.hasPty(bystander.id)).toBe(true)
    expect(await app.write(bystander.id, 'x')).toEqual({ kind: 'accepted' })
  }, 90_000)
})

describe('the snapshot retry', () => {
  /**
   * A history whose screen serializes to `screenBytes` of JSON plus `rowBytes` per scrollback row
   * it holds (at most `held`); counts the serializations.
   */
  function fakeHistory(screenBytes: number, rowBytes: number, held: number) {
    let serializations = 0
    return {
      get serializations() {
        return serializations
      },
      snapshotAndRowsHeld: async (rows: number | undefined) => {
        serializations += 1
        const kept = Math.min(rows ?? held, held)
        return { snapshot: { data: 'x'.repeat(screenBytes + kept * rowBytes - 2), cols: 80, rows: 24, seq: 0, source: 'headless' as const, skippedChars: 0 }, scrollbackRowsHeld: kept }
      },
    }
  }

  it('fits within three serializations when the screen alone fits, and knows in two when it does not — whatever the scrollback held', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 1, max: 2_000 }), fc.boolean(), async (held, rowBytes, screenFits) => {
        // A 64 KiB limit stands for the 16 MiB one (the same arithmetic, cheap strings).
        const limit = 64 * 1024
        const screenBytes = screenFits ? 4 * 1024 : limit + 1
        const history = fakeHistory(screenBytes, rowBytes, held)
        const result = await snapshotWithinFrame(history, 1_000, 1_000, limit).then(
          (snapshot) => snapshot,
          (error: unknown) => error,
        )
        if (screenFits) expect(Buffer.byteLength(JSON.stringify((result as { data: string }).data))).toBeLessThanOrEqual(limit)
        else expect(isPtyHostError(result) && result.code).toBe('host_error')
        // Before: halving from the rows asked — up to 11 serializations of a screen too large.
        if (!screenFits) expect(history.serializations).toBe(held === 0 ? 1 : 2)
        else expect(history.serializations).toBeLessThanOrEqual(3)
      }),
      { numRuns: 200 },
    )
  })
})

describe('the host\'s replies', () => {
  it('answer a call whose reply would outgrow a frame with host_error, in a frame the client accepts', () => {
    const written: Buffer[] = []
    const socket = { destroyed: false, cork: () => undefined, uncork: () => undefined, write: (frame: Buffer) => void written.push(frame) }
    const client = new HostClient(socket as unknown as Socket)
    client.send({ v: 2, type: 'reply', id: 7, ok: true, result: 'x'.repeat(PTY_HOST_MAX_FRAME_BYTES) })
    client.send({ v: 2, type: 'reply', id: 8, ok: true, result: 'small' })
    const decoder = new FrameDecoder()
    const messages = written.flatMap((frame) => decoder.push(frame))
    expect(messages).toEqual([
      { v: 2, type: 'reply', id: 7, ok: false, error: { code: 'host_error', message: expect.stringContaining('larger than a frame holds') } },
      { v: 2, type: 'reply', id: 8, ok: true, result: 'small' },
    ])
  })
})

describe('write pieces', () => {
  const unitArb = fc.oneof(fc.constantFrom('a', '\u0001', 'é', '€', '\ud83d\ude00', '\ud800', '\udc00'))
  const textArb = fc.array(unitArb, { maxLength: 60 }).map((units) => units.join(''))

  it('join back to the write, each within the limit, never splitting a surrogate pair', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 2, max: 9 }), (data, maxChars) => {
        const pieces = textPieces(data, maxChars)
        expect(pieces.join('')).toBe(data)
        for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(maxChars)
        if (data.length > 0) for (const piece of pieces) expect(piece.length).toBeGreaterThan(0)
        for (let i = 1; i < pieces.length; i++) {
          const last = pieces[i - 1]!.charCodeAt(pieces[i - 1]!.length - 1)
          const first = pieces[i]!.charCodeAt(0)
          expect(last >= 0xd800 && last <= 0xdbff && first >= 0xdc00 && first <= 0xdfff).toBe(false)
        }
      }),
    )
  })

  it('are sized to the host\'s frame limit (its welcome) with the longest incarnation id, never above the default', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1024, max: 64 * 1024 * 1024 }), fc.integer({ min: 1, max: 100 }), (maxFrameBytes, ptyIdLength) => {
        const chars = writePieceCharsFor(maxFrameBytes, ptyIdLength)
        expect(chars).toBeLessThanOrEqual(PTY_HOST_WRITE_PIECE_CHARS)
        expect(chars).toBeGreaterThanOrEqual(2)
        const frame = Buffer.byteLength(JSON.stringify({ v: 2, type: 'request', id: 2 ** 40, method: 'write', params: { ptyId: '\u0001'.repeat(ptyIdLength), data: '\u0001'.repeat(chars), expectedIncarnationId: '\u0001'.repeat(128) } }))
        if (chars > 2) expect(frame).toBeLessThanOrEqual(maxFrameBytes)
        // Never needlessly small: a 64 KiB host takes pieces of thousands of code units.
        if (maxFrameBytes >= 64 * 1024) expect(chars).toBeGreaterThan(10_000)
      }),
    )
  })

  it('of bytes join back to the write, each within the limit; sized to the host\'s frames with the longest incarnation id', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 60 }), fc.integer({ min: 1, max: 9 }), (bytes, maxBytes) => {
        const pieces = bytePieces(bytes, maxBytes)
        expect(Buffer.concat(pieces).equals(Buffer.from(bytes))).toBe(true)
        for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(maxBytes)
      }),
    )
    fc.assert(
      fc.property(fc.integer({ min: 2048, max: 64 * 1024 * 1024 }), fc.integer({ min: 1, max: 100 }), (maxFrameBytes, ptyIdLength) => {
        const bytes = writePieceBytesFor(maxFrameBytes, ptyIdLength)
        expect(bytes).toBeLessThanOrEqual(PTY_HOST_WRITE_PIECE_BYTES)
        expect(bytes % 3).toBe(0)
        const params = { ptyId: '\u0001'.repeat(ptyIdLength), bytes: Buffer.alloc(bytes).toString('base64'), expectedIncarnationId: '\u0001'.repeat(128) }
        expect(Buffer.byteLength(JSON.stringify({ v: 2, type: 'request', id: 2 ** 40, method: 'writeBytes', params }))).toBeLessThanOrEqual(maxFrameBytes)
        if (maxFrameBytes >= 64 * 1024) expect(bytes).toBeGreaterThan(40_000)
      }),
    )
  })

  it('fit a frame at the worst JSON escaping (6 bytes per code unit)', () => {
    const frame = Buffer.byteLength(JSON.stringify({ v: 2, type: 'request', id: 1, method: 'write', params: { ptyId: 'x'.repeat(200), data: '\u0001'.repeat(PTY_HOST_WRITE_PIECE_CHARS) } }))
    expect(frame).toBeLessThanOrEqual(PTY_HOST_MAX_FRAME_BYTES)
  })

  const settlementArb: fc.Arbitrary<WriteSettlement> = fc.oneof(
    fc.constant<WriteSettlement>({ kind: 'accepted' }),
    fc.constantFrom<WriteSettlement>({ kind: 'refused', reason: 'pty_exited' }, { kind: 'refused', reason: 'provider_refused_write' }),
    fc.record({ kind: fc.constant('unverifiable' as const), reason: fc.constantFrom('transport_lost' as const, 'settlement_timeout' as const), bytesHandedToTransport: fc.boolean() }),
  )

  it('settle as one write: accepted only if every piece was, refused only if every piece was, else unverifiable', () => {
    fc.assert(
      fc.property(fc.array(settlementArb, { minLength: 1, maxLength: 6 }), (settlements) => {
        const combined = combinePieceSettlements(settlements)
        const kinds = settlements.map((s) => s.kind)
        if (kinds.every((k) => k === 'accepted')) expect(combined).toEqual({ kind: 'accepted' })
        else if (kinds.every((k) => k === 'refused')) expect(combined).toEqual(settlements[0])
        else {
          expect(combined.kind).toBe('unverifiable')
          // Bytes may have left whenever a piece was accepted or may have handed some on.
          const mayHaveLeft = settlements.some((s) => s.kind === 'accepted' || (s.kind === 'unverifiable' && s.bytesHandedToTransport))
          expect(combined.kind === 'unverifiable' && combined.bytesHandedToTransport).toBe(mayHaveLeft)
          if (kinds.includes('accepted')) expect(combined).toEqual({ kind: 'unverifiable', reason: 'partial_write', bytesHandedToTransport: true })
        }
      }),
    )
  })
})

describe('pty host: the maxFrameBytes option', () => {
  // Until 7 Dec `maxFrameBytes: 10` was taken: the host started, took the lock, and dropped every
  // client at its first request (no request fits 10 bytes) — a host of no use, said nowhere.
  it.each([10, 1, 1024, 4095])('refuses %j, a size no request fits, with invalid_option naming the option and the value, taking no lock', async (value) => {
    const { dir, socketPath } = makeSocketDir()
    cleanups.push(() => killHostAndClean(socketPath, dir))
    const refused = await startPtyHost({ socketPath, maxFrameBytes: value }).catch((error: unknown) => error)
    expect(isPtyHostError(refused) && { code: refused.code, option: refused.option, value: refused.value }).toEqual({ code: 'invalid_option', option: 'maxFrameBytes', value })
    expect((refused as Error).message).toContain('`maxFrameBytes`')
    expect((refused as Error).message).toContain(`got ${value} (number)`)
    // Nothing held: the smallest size taken starts on the same socket, and serves a spawn and a write.
    const host = await startPtyHost({ socketPath, maxFrameBytes: 4096 })
    const app = providerDisposedAfter(cleanups, socketPath, { autoStart: false })
    const live = await app.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'] })
    expect(await app.write(live.id, 'x')).toEqual({ kind: 'accepted' })
    await app.shutdown(live.id, { timeoutMs: 5_000 })
    await app.dispose()
    await host.close()
  }, 30_000)
})
