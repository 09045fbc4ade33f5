import { describe, it, expect, vi } from 'vitest'
import type { PtyIncarnationId, PtySpawnResult } from 'ptykit/contracts'
import { createFakePtyProvider } from 'ptykit/testing'
import { setup, kinds, exitsOf } from './fake-pty-provider-harness.js'

describe('createFakePtyProvider: failing, hanging and early-exiting spawns', () => {
  it('should reject with the scripted failure and leave nothing running', async () => {
    const provider = createFakePtyProvider()
    const failure = new Error('ENOENT')
    const committed = vi.fn()
    provider.scriptNextSpawn({ fail: failure })
    await expect(provider.spawn({ onPtySpawnCommitted: committed })).rejects.toBe(failure)
    expect(provider.livePtyIds()).toEqual([])
    expect(await provider.listProcesses()).toEqual([])
    expect(committed).not.toHaveBeenCalled()
  })

  it('should hold a hung spawn until releaseSpawn(), oldest first, and then deliver its script', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ hang: true, id: 'first', output: ['one'] })
    provider.scriptNextSpawn({ hang: true, id: 'second' })
    let firstResult: PtySpawnResult | undefined
    const first = provider.spawn({}).then((result) => (firstResult = result))
    const second = provider.spawn({})
    await provider.settle()
    expect(firstResult).toBeUndefined()
    expect(provider.pendingSpawnCount()).toBe(2)
    expect(provider.getPty('first')?.spawnPending).toBe(true)
    expect(provider.livePtyIds()).toEqual(['first', 'second'])

    provider.releaseSpawn()
    await first
    expect(firstResult?.id).toBe('first')
    expect(provider.pendingSpawnCount()).toBe(1)
    await provider.settle()
    expect(kinds(log)).toEqual(['data:one'])

    provider.releaseSpawn('second')
    expect((await second).id).toBe('second')
    expect(provider.pendingSpawnCount()).toBe(0)
  })

  it('should release or fail a hung spawn by id', async () => {
    const provider = createFakePtyProvider()
    provider.scriptNextSpawn({ hang: true, id: 'a' })
    provider.scriptNextSpawn({ hang: true, id: 'b' })
    const a = provider.spawn({})
    const b = provider.spawn({})
    const boom = new Error('transport lost')
    provider.failSpawn('b', boom)
    await expect(b).rejects.toBe(boom)
    expect(provider.livePtyIds()).toEqual(['a'])
    expect(provider.hasPty('b')).toBe(false)
    provider.releaseSpawn('a')
    expect((await a).id).toBe('a')
  })

  it('should fail the oldest hung spawn with a default Error and leave its process removed', async () => {
    const provider = createFakePtyProvider()
    provider.scriptNextSpawn({ hang: true })
    const spawning = provider.spawn({})
    provider.failSpawn()
    await expect(spawning).rejects.toThrow('Fake spawn failed (scripted)')
    expect(provider.livePtyIds()).toEqual([])
  })

  it('should release a hung spawn whose process exited meanwhile with exitedBeforeSpawnReply: true', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ hang: true, id: 'racer', output: ['never'] })
    const spawning = provider.spawn({})
    provider.emitData('racer', 'early')
    provider.emitExit('racer', { exitCode: 1 })
    provider.releaseSpawn('racer')
    expect(await spawning).toMatchObject({ id: 'racer', exitedBeforeSpawnReply: true })
    await provider.settle()
    expect(kinds(log)).toEqual(['data:early', 'exit:1'])
  })

  it('should throw a TypeError when releasing or failing a spawn that is not pending', () => {
    const provider = createFakePtyProvider()
    expect(() => provider.releaseSpawn()).toThrow('releaseSpawn: no hung spawn is pending')
    expect(() => provider.failSpawn('x')).toThrow('failSpawn: no hung spawn with the id "x" is pending')
  })

  it('should emit the exit (after any scripted output) before an exitBeforeReply spawn resolves', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ output: ['boot'], exitBeforeReply: { exitCode: 0, signal: 11 } })
    const spawning = provider.spawn({})
    expect(kinds(log)).toEqual(['data:boot', 'exit:0'])
    const result = await spawning
    expect(result.exitedBeforeSpawnReply).toBe(true)
    expect(exitsOf(log)[0]).toEqual({
      id: result.id,
      code: 0,
      incarnationId: result.incarnationId,
      cause: { kind: 'signaled', signal: 11 },
    })
    expect(provider.livePtyIds()).toEqual([])
    await provider.settle()
    expect(exitsOf(log)).toHaveLength(1)
  })
})

describe('createFakePtyProvider: id reuse and incarnations', () => {
  it('should mint a new incarnation when a script reuses an id', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ id: 'slot' })
    const first = await provider.spawn({})
    provider.emitExit('slot', { exitCode: 0 })
    provider.scriptNextSpawn({ id: 'slot' })
    const second = await provider.spawn({})
    expect(second.id).toBe('slot')
    expect(second.incarnationId).not.toBe(first.incarnationId)
    expect(provider.getPty('slot')?.incarnations).toEqual([first.incarnationId, second.incarnationId])
    expect(provider.getPty('slot')?.live).toBe(true)
    expect(exitsOf(log).map((exit) => exit.incarnationId)).toEqual([first.incarnationId])
  })

  it('should emit a stale exit for an older incarnation without ending the current one', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ id: 'slot' })
    const old = await provider.spawn({})
    provider.scriptNextSpawn({ id: 'slot' })
    const current = await provider.spawn({})
    expect(old.incarnationId).toBeDefined()
    provider.emitExit('slot', { exitCode: 0, signal: 1, incarnationId: old.incarnationId as PtyIncarnationId })
    expect(exitsOf(log)).toEqual([
      { id: 'slot', code: 0, incarnationId: old.incarnationId, cause: { kind: 'signaled', signal: 1 } },
    ])
    expect(provider.getPty('slot')).toMatchObject({ live: true, incarnationId: current.incarnationId })
    expect((provider.write('slot', 'still here') as { kind: string }).kind).toBe('accepted')
  })
})
