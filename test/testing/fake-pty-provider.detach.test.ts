// The fake's detach(): it answers as the pty host provider does after its own detach()
// (docs/pty-host.md, "After detach()") — refusals coded `provider_detached` where an answer would
// be a guess, `null` where the provider is blind, no event once its PTYs run on unseen.
import { describe, expect, it } from 'vitest'
import { FakePtyProviderDetachedError, isFakePtyProviderDetachedError, type FakePtyProvider } from 'ptykit/testing'
import { setup, kinds } from './fake-pty-provider-harness.js'

const LONG = {} as const

async function refusalOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (answer) => ({ answered: answer }),
    (error: unknown) => error,
  )
}

async function spawnLive(provider: FakePtyProvider): Promise<string> {
  provider.scriptNextSpawn({ ...LONG })
  return (await provider.spawn({})).id
}

describe('fake provider: detach()', () => {
  it('refuses spawn, listProcesses and a stop with provider_detached, naming the method and the PTY', async () => {
    const { provider } = setup()
    const id = await spawnLive(provider)
    await provider.detach()
    const spawn = await refusalOf(provider.spawn({}))
    expect(isFakePtyProviderDetachedError(spawn)).toBe(true)
    expect(spawn).toBeInstanceOf(FakePtyProviderDetachedError)
    expect(spawn).toMatchObject({ code: 'provider_detached', method: 'spawn', ptyId: undefined, providerName: 'fake' })
    expect((spawn as Error).message).toMatch(/`spawn`.*detached/)
    expect(await refusalOf(provider.listProcesses())).toMatchObject({ code: 'provider_detached', method: 'listProcesses' })
    const stop = await refusalOf(provider.shutdown(id, { immediate: true }))
    expect(stop).toMatchObject({ code: 'provider_detached', method: 'shutdown', ptyId: id })
    expect((stop as Error).message).toMatch(/`shutdown`/)
    // The PTY runs on: nothing stopped it.
    expect(provider.getPty(id)?.live).toBe(true)
  })

  it('answers null ("unknown") for a live PTY, refuses its writes provider_refused_write, and changes nothing', async () => {
    const { provider, log } = setup()
    const id = await spawnLive(provider)
    provider.setProcessInfo(id, { foregroundProcess: 'vim', hasChildProcesses: true, foregroundEvidence: { foregroundProcess: 'vim', shellForeground: false } })
    await provider.detach()
    expect(provider.hasPty(id)).toBeNull()
    expect(await provider.probeLiveness(id)).toBeNull()
    expect(provider.getSize(id)).toBeNull()
    expect(await provider.getCwd(id)).toBeNull()
    expect(await provider.getForegroundProcess(id)).toBeNull()
    expect(await provider.hasChildProcesses(id)).toBeNull()
    expect(await provider.confirmForeground(id)).toBeNull()
    expect(await provider.getBufferSnapshot(id)).toBeNull()
    expect(provider.write(id, 'x')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(provider.writeBytes(id, new Uint8Array([0x78]))).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(provider.write('never-spawned', 'x')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    expect(provider.hasPty('never-spawned')).toBeNull()
    expect(provider.resize(id, 100, 30)).toBe(false)
    expect(provider.pauseProducer(id)).toBeUndefined()
    expect(provider.resumeProducer(id)).toBeUndefined()
    expect(provider.acknowledgeData(id, 5)).toBeUndefined()
    await expect(provider.resetInputModes(id)).resolves.toBeUndefined()
    // Refused, as the pty host provider's: the host keeps the screen for the next app.
    await expect(provider.clearBuffer(id)).rejects.toMatchObject({ code: 'provider_detached', method: 'clearBuffer', ptyId: id })
    expect(provider.supportsForegroundProcessEvidence()).toBe(true)
    expect(provider.getPty(id)).toMatchObject({ live: true, cols: 80, rows: 24, paused: false, acknowledgedChars: 0, inputModeResets: 0, written: '' })
    expect(log).toEqual([])
  })

  it('still checks arguments first, as the pty host provider does', async () => {
    const { provider } = setup()
    const id = await spawnLive(provider)
    await provider.detach()
    expect(() => provider.resize(id, 0, 24)).toThrow(TypeError)
    expect(() => provider.write(5 as unknown as string, 'x')).toThrow(TypeError)
    expect(() => provider.acknowledgeData(id, -1)).toThrow(TypeError)
    await expect(provider.shutdown(id, { deadlineMs: 5 })).rejects.toThrow(TypeError)
    await expect(provider.listProcesses({ membershipOnly: 'yes' } as never)).rejects.toThrow(TypeError)
  })

  it('a PTY whose exit was heard before the detach: gone (false), its stop resolves, its writes pty_exited — not one whose exit was still held behind paused output', async () => {
    const { provider, log } = setup()
    const heard = await spawnLive(provider)
    const held = await spawnLive(provider)
    provider.emitExit(heard, { exitCode: 0 })
    provider.pauseProducer(held)
    provider.emitData(held, 'last words')
    provider.emitExit(held, { exitCode: 3 })
    expect(kinds(log)).toEqual(['exit:0'])
    await provider.detach()
    expect(provider.hasPty(heard)).toBe(false)
    expect(await provider.probeLiveness(heard)).toBe(false)
    await expect(provider.shutdown(heard)).resolves.toBeUndefined()
    expect(provider.write(heard, 'x')).toEqual({ kind: 'refused', reason: 'pty_exited' })
    // Its exit never reached a listener: unknown, as anything the detached fake cannot see.
    expect(provider.hasPty(held)).toBeNull()
    expect(await refusalOf(provider.shutdown(held))).toMatchObject({ code: 'provider_detached', ptyId: held })
    expect(provider.write(held, 'x')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    provider.resumeProducer(held)
    await provider.settle()
    expect(kinds(log)).toEqual(['exit:0'])
  })

  it('no event reaches a listener after it: scripted output plays unheard, held input settles unverifiable', async () => {
    const { provider, log } = setup({ scheduling: 'manual' })
    provider.scriptNextSpawn({ output: ['hello'], exit: { exitCode: 0 } })
    const { id: scripted } = await provider.spawn({})
    const reading = await spawnLive(provider)
    provider.setInputHeld(reading, true)
    const write = provider.write(reading, 'typed')
    await provider.detach()
    await provider.settle()
    expect(log).toEqual([])
    await expect(write).resolves.toEqual({ kind: 'unverifiable', reason: 'transport_lost', bytesHandedToTransport: true })
    // The script's process ended — unseen: its liveness stays unknown.
    expect(provider.hasPty(scripted)).toBeNull()
  })

  it('a hung spawn still settles as the test says — its PTY unseen — as the pty host lets a spawn already sent finish', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ hang: true, output: ['late'] })
    const spawning = provider.spawn({})
    await provider.detach()
    provider.releaseSpawn()
    const { id } = await spawning
    await provider.settle()
    expect(log).toEqual([])
    expect(provider.hasPty(id)).toBeNull()
    expect(provider.getPty(id)?.live).toBe(true)
  })

  it('dispose() after it stops nothing and reports no exit; then every call is refused provider_disposed', async () => {
    const { provider, log } = setup()
    const id = await spawnLive(provider)
    provider.scriptNextSpawn({ hang: true })
    const hung = provider.spawn({})
    await provider.detach()
    await provider.dispose()
    expect(log).toEqual([])
    expect(provider.getPty(id)?.live).toBe(true)
    await expect(hung).rejects.toMatchObject({ code: 'provider_disposed' })
    expect(() => provider.hasPty(id)).toThrow(expect.objectContaining({ code: 'provider_disposed' }) as Error)
    await expect(provider.shutdown(id)).rejects.toMatchObject({ code: 'provider_disposed', ptyId: id })
  })

  it('is recorded in calls; a second call, or one after dispose(), does nothing', async () => {
    const { provider } = setup()
    const id = await spawnLive(provider)
    provider.clearCalls()
    await provider.detach()
    await provider.detach()
    expect(provider.calls.map((call) => call.method)).toEqual(['detach', 'detach'])
    const other = setup()
    const otherId = await spawnLive(other.provider)
    await other.provider.dispose()
    await expect(other.provider.detach()).resolves.toBeUndefined()
    // Still disposed, not detached: refused provider_disposed.
    await expect(other.provider.shutdown(otherId)).rejects.toMatchObject({ code: 'provider_disposed' })
    expect(provider.hasPty(id)).toBeNull()
  })

  it('the controls that emit or script throw a TypeError naming the control; the inspections answer', async () => {
    const { provider } = setup()
    const id = await spawnLive(provider)
    await provider.detach()
    const controls: [string, () => unknown][] = [
      ['emitData', () => provider.emitData(id, 'x')],
      ['emitOutputLoss', () => provider.emitOutputLoss(id, 3)],
      ['emitExit', () => provider.emitExit(id, { exitCode: 0 })],
      ['setLiveness', () => provider.setLiveness(id, true)],
      ['setWriteSettlement', () => provider.setWriteSettlement(id, undefined)],
      ['setInputHeld', () => provider.setInputHeld(id, true)],
      ['setShutdownBehaviour', () => provider.setShutdownBehaviour(id, 'fail')],
      ['setProcessInfo', () => provider.setProcessInfo(id, { foregroundProcess: 'vim' })],
      ['scriptNextSpawn', () => provider.scriptNextSpawn({})],
    ]
    for (const [control, call] of controls) {
      expect(call, control).toThrow(TypeError)
      expect(call, control).toThrow(new RegExp(`^${control}: the fake PTY provider "fake" was detached`))
    }
    expect(provider.livePtyIds()).toEqual([id])
    expect(provider.getPty(id)?.live).toBe(true)
    expect(provider.pendingSpawnCount()).toBe(0)
    await expect(provider.settle()).resolves.toBeUndefined()
  })
})

describe('fake provider: the test controls after dispose()', () => {
  it('throw a TypeError naming the control and saying the fake was disposed (they were accepted in silence, scripting what no call could see)', async () => {
    const { provider } = setup()
    const id = await spawnLive(provider)
    await provider.dispose()
    const controls: [string, () => unknown][] = [
      ['scriptNextSpawn', () => provider.scriptNextSpawn({ output: ['x'] })],
      ['setLiveness', () => provider.setLiveness(id, true)],
      ['setWriteSettlement', () => provider.setWriteSettlement(id, { kind: 'accepted' })],
      ['setInputHeld', () => provider.setInputHeld(id, false)],
      ['setShutdownBehaviour', () => provider.setShutdownBehaviour(id, 'confirm')],
      ['setProcessInfo', () => provider.setProcessInfo(id, {})],
      ['emitData', () => provider.emitData(id, 'x')],
      ['emitOutputLoss', () => provider.emitOutputLoss(id, 1)],
      ['emitExit', () => provider.emitExit(id, { exitCode: 0 })],
      ['releaseSpawn', () => provider.releaseSpawn()],
      ['failSpawn', () => provider.failSpawn()],
    ]
    for (const [control, call] of controls) {
      expect(call, control).toThrow(TypeError)
      expect(call, control).toThrow(new RegExp(`^${control}: the fake PTY provider "fake" was disposed`))
    }
    // An unknown id is named as such first, disposed or not.
    expect(() => provider.setLiveness('nope', true)).toThrow(/^setLiveness: no fake PTY has the id "nope"/)
    // The inspections still answer.
    expect(provider.getPty(id)?.live).toBe(false)
    expect(provider.livePtyIds()).toEqual([])
    await expect(provider.settle()).resolves.toBeUndefined()
  })
})
