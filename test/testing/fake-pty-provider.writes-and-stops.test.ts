import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import type { WriteSettlement } from 'ptykit/contracts'
import { toPtyIncarnationId } from 'ptykit/contracts'
import {
  FAKE_GRACEFUL_STOP_SIGNAL,
  FAKE_IMMEDIATE_STOP_SIGNAL,
  arbitraryWriteSettlement,
  createFakePtyProvider,
} from 'ptykit/testing'
import { setup, exitsOf } from './fake-pty-provider-harness.js'

describe('createFakePtyProvider: liveness', () => {
  it('should answer true while live and false after exit when listings are authoritative', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    expect(provider.hasPty(id)).toBe(true)
    expect(await provider.probeLiveness(id)).toBe(true)
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.hasPty(id)).toBe(false)
    expect(await provider.probeLiveness(id)).toBe(false)
    expect(provider.hasPty('never-spawned')).toBe(false)
  })

  it('should answer null after exit (and for unknown ids) when listings are not authoritative', async () => {
    const provider = createFakePtyProvider({ authoritativeListings: false })
    expect(provider.authoritativeListings).toBe(false)
    const { id } = await provider.spawn({})
    expect(provider.hasPty(id)).toBe(true)
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.hasPty(id)).toBeNull()
    expect(await provider.probeLiveness(id)).toBeNull()
    expect(provider.hasPty('never-spawned')).toBeNull()
  })

  it.each([true, false, null] as const)('should answer the scripted liveness %s', async (liveness) => {
    const provider = createFakePtyProvider()
    provider.scriptNextSpawn({ liveness })
    const { id } = await provider.spawn({})
    expect(provider.hasPty(id)).toBe(liveness)
    expect(await provider.probeLiveness(id)).toBe(liveness)
  })

  it('should let setLiveness override and then restore the default', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.setLiveness(id, null)
    expect(provider.hasPty(id)).toBeNull()
    provider.setLiveness(id, undefined)
    expect(provider.hasPty(id)).toBe(true)
    expect(() => provider.setLiveness('nope', true)).toThrow('setLiveness: no fake PTY has the id "nope"')
  })
})

describe('createFakePtyProvider: writes', () => {
  it('should accept writes to a live PTY and record them', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    expect(provider.write(id, 'ls\r')).toEqual({ kind: 'accepted' })
    expect(provider.write(id, 'pwd\r')).toEqual({ kind: 'accepted' })
    expect(provider.getPty(id)?.written).toBe('ls\rpwd\r')
  })

  it('should refuse writes after exit with pty_exited and to unknown ids with pty_not_found', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.write(id, 'x')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(provider.write('ghost', 'x')).toEqual({ kind: 'refused', reason: 'pty_not_found' })
    expect(provider.getPty(id)?.writes).toEqual([])
  })

  it('should answer every scripted write settlement, and only accepted writes count as written (property)', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryWriteSettlement(), arbitraryWriteSettlement(), async (scripted, later) => {
        const provider = createFakePtyProvider()
        provider.scriptNextSpawn({ writeSettlement: scripted })
        const { id } = await provider.spawn({})
        expect(provider.write(id, 'a')).toEqual(scripted)
        provider.setWriteSettlement(id, later)
        expect(provider.write(id, 'b')).toEqual(later)
        provider.setWriteSettlement(id, undefined)
        expect(provider.write(id, 'c')).toEqual({ kind: 'accepted' })
        const accepted = [scripted, later].map((s: WriteSettlement, i) => (s.kind === 'accepted' ? 'ab'[i] : ''))
        expect(provider.getPty(id)?.written).toBe(`${accepted.join('')}c`)
        expect(provider.getPty(id)?.writes.map((write) => write.settlement)).toEqual([scripted, later, { kind: 'accepted' }])
      }),
      { numRuns: 40 },
    )
  })
})

describe('createFakePtyProvider: input held for a program that reads none (setInputHeld)', () => {
  it('holds writes (a promise each), hands them on in order when released: accepted, recorded', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    expect(provider.write(id, 'before ')).toEqual({ kind: 'accepted' })
    provider.setInputHeld(id, true)
    const paste = provider.write(id, 'paste ')
    const bytes = provider.writeBytes(id, Uint8Array.of(0x61))
    expect(paste).toBeInstanceOf(Promise)
    expect(provider.getPty(id)?.written).toBe('before ')
    provider.setInputHeld(id, false)
    expect(await Promise.all([paste, bytes])).toEqual([{ kind: 'accepted' }, { kind: 'accepted' }])
    expect(provider.getPty(id)?.written).toBe('before paste a')
    expect(provider.write(id, '!')).toEqual({ kind: 'accepted' })
  })

  it.each([
    ['its exit', (provider: ReturnType<typeof createFakePtyProvider>, id: string) => provider.emitExit(id, { exitCode: 0, signal: 9 })],
    ['a stop', (provider: ReturnType<typeof createFakePtyProvider>, id: string) => void provider.shutdown(id)],
    ['a stop whose exit is never reported', (provider: ReturnType<typeof createFakePtyProvider>, id: string) => (provider.setShutdownBehaviour(id, 'exit_unreported'), void provider.shutdown(id))],
  ])('drops what it holds when the PTY ends first (%s): each held write refused pty_exited, never accepted', async (_name, end) => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.setInputHeld(id, true)
    const held = [provider.write(id, 'p'.repeat(1_000)), provider.write(id, 'behind')]
    end(provider, id)
    expect(await Promise.all(held)).toEqual([
      { kind: 'refused', reason: 'pty_exited' },
      { kind: 'refused', reason: 'pty_exited' },
    ])
    expect(provider.getPty(id)?.written).toBe('')
    expect(provider.getPty(id)?.writes.map((write) => write.settlement.kind)).toEqual(['refused', 'refused'])
  })

  it('through a controller: writeWithSettlement says pending, then refused; write says handed over', async () => {
    const provider = createFakePtyProvider()
    const { createPtyController } = await import('ptykit/controller')
    const controller = createPtyController({ provider })
    const { id } = await controller.spawn({})
    provider.setInputHeld(id, true)
    const settlement = controller.writeWithSettlement(id, 'paste', 'driving')
    expect(controller.write(id, 'x', 'driving')).toBe(true)
    provider.emitExit(id, { exitCode: 0 })
    expect(await settlement).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(() => provider.setInputHeld(id, 'yes' as never)).toThrow('Expected the `held` argument of setInputHeld to be a boolean, got "yes"')
    await controller.dispose()
  })
})

describe('createFakePtyProvider: writes of bytes', () => {
  it('should record a copy of the bytes: writtenBytes holds every accepted write in order (strings as UTF-8), written decodes them', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    const bytes = Buffer.from([0x68, 0xc3, 0xa9, 0xff, 0x00])
    expect(provider.write(id, 'é')).toEqual({ kind: 'accepted' })
    expect(provider.writeBytes(id, bytes)).toEqual({ kind: 'accepted' })
    bytes.fill(0) // the caller reuses its buffer: the record keeps what was written
    const pty = provider.getPty(id)!
    expect([...pty.writtenBytes]).toEqual([0xc3, 0xa9, 0x68, 0xc3, 0xa9, 0xff, 0x00])
    expect(pty.writes[1]?.bytes).toEqual(new Uint8Array([0x68, 0xc3, 0xa9, 0xff, 0x00]))
    expect(pty.writes[1]?.data).toBe('hé\uFFFD\u0000')
    expect(pty.written).toBe('éhé\uFFFD\u0000')
    expect(provider.calls.map((call) => call.method)).toEqual(['spawn', 'write', 'writeBytes'])
  })

  it('should refuse bytes as it refuses text (pty_exited, pty_not_found), count only accepted ones, and throw a TypeError for what is not a Uint8Array', async () => {
    const provider = createFakePtyProvider()
    const { id } = await provider.spawn({})
    provider.setWriteSettlement(id, { kind: 'refused', reason: 'provider_refused_write' })
    expect(provider.writeBytes(id, new Uint8Array([1]))).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    provider.setWriteSettlement(id, undefined)
    for (const bytes of ['x', [1, 2], 42, new ArrayBuffer(1)]) {
      expect(() => provider.writeBytes(id, bytes as never)).toThrow(/^Expected the `bytes` argument to be a Uint8Array \(a Buffer is one\), got /)
    }
    expect(provider.getPty(id)?.writtenBytes).toEqual(new Uint8Array(0))
    provider.emitExit(id, { exitCode: 0 })
    expect(provider.writeBytes(id, new Uint8Array([1]))).toEqual({ kind: 'refused', reason: 'pty_exited' })
    expect(provider.writeBytes('ghost', new Uint8Array([1]))).toEqual({ kind: 'refused', reason: 'pty_not_found' })
  })
})

describe('createFakePtyProvider: shutdown', () => {
  it('should confirm a graceful stop with SIGHUP and an immediate one with SIGKILL, each attesting the stop came first', async () => {
    const { provider, log } = setup()
    const a = await provider.spawn({})
    const b = await provider.spawn({})
    await provider.shutdown(a.id)
    await provider.shutdown(b.id, { immediate: true })
    expect(exitsOf(log)).toEqual([
      { id: a.id, code: 0, incarnationId: a.incarnationId, cause: { kind: 'signaled', signal: FAKE_GRACEFUL_STOP_SIGNAL }, stopRequestedBeforeDeath: true },
      { id: b.id, code: 0, incarnationId: b.incarnationId, cause: { kind: 'signaled', signal: FAKE_IMMEDIATE_STOP_SIGNAL }, stopRequestedBeforeDeath: true },
    ])
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should emit the exit before the shutdown promise resolves', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    const stopping = provider.shutdown(id)
    expect(exitsOf(log)).toHaveLength(1)
    await stopping
  })

  it('should resolve a never-confirmed stop while the PTY stays live and no exit ever comes', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const { id } = await provider.spawn({})
    await expect(provider.shutdown(id)).resolves.toBeUndefined()
    await provider.settle()
    expect(log).toEqual([])
    expect(provider.hasPty(id)).toBe(true)
  })

  it('should reject a failing stop with an Error and keep the PTY live', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.setShutdownBehaviour(id, 'fail')
    await expect(provider.shutdown(id)).rejects.toThrow(`Fake shutdown of PTY "${id}" failed (scripted)`)
    expect(log).toEqual([])
    expect(provider.livePtyIds()).toEqual([id])
    provider.setShutdownBehaviour(id, 'confirm')
    await provider.shutdown(id)
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should leave a replacement alone when the stop names an older incarnation', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    await provider.shutdown(id, { expectedIncarnationId: toPtyIncarnationId('someone-else') })
    expect(log).toEqual([])
    expect(provider.hasPty(id)).toBe(true)
  })

  it('should resolve a stop of an unknown or already exited PTY without emitting anything', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.emitExit(id, { exitCode: 0 })
    await provider.shutdown(id)
    await provider.shutdown('ghost')
    expect(exitsOf(log)).toHaveLength(1)
  })
})
