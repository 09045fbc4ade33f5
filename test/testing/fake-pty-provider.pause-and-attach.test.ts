import { describe, it, expect, vi } from 'vitest'
import fc from 'fast-check'
import type { PtyIncarnationId } from 'ptykit/contracts'
import { toPtyIncarnationId } from 'ptykit/contracts'
import {
  FakePtyAbsentError,
  FakePtyLiveOtherIncarnationError,
  createFakePtyProvider,
  isFakePtyAbsentError,
} from 'ptykit/testing'
import { setup, kinds } from './fake-pty-provider-harness.js'

describe('createFakePtyProvider: pause and resume', () => {
  it('should hold output while paused and deliver it in order on resume', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.pauseProducer(id)
    provider.emitData(id, '1')
    provider.emitData(id, '2')
    expect(log).toEqual([])
    expect(provider.getPty(id)).toMatchObject({ paused: true, heldEventCount: 2 })
    provider.resumeProducer(id)
    expect(kinds(log)).toEqual(['data:1', 'data:2'])
    expect(provider.getPty(id)).toMatchObject({ paused: false, heldEventCount: 0 })
    expect(provider.calls.filter((call) => call.method.endsWith('Producer')).map((call) => call.method)).toEqual([
      'pauseProducer',
      'resumeProducer',
    ])
  })

  it('should hold scripted output too, and deliver an exit behind held output after it', async () => {
    const { provider, log } = setup()
    provider.scriptNextSpawn({ output: ['a', 'b'], exit: { exitCode: 4 } })
    const { id } = await provider.spawn({})
    provider.pauseProducer(id)
    await provider.settle()
    expect(log).toEqual([])
    expect(provider.livePtyIds()).toEqual([])
    expect((provider.write(id, 'x') as { kind: string }).kind).toBe('refused')
    provider.resumeProducer(id)
    expect(kinds(log)).toEqual(['data:a', 'data:b', 'exit:4'])
  })

  it('should deliver an exit at once while paused when no output is held', async () => {
    const { provider, log } = setup()
    const { id } = await provider.spawn({})
    provider.pauseProducer(id)
    provider.emitExit(id, { exitCode: 0 })
    expect(kinds(log)).toEqual(['exit:0'])
  })

  it('should always deliver data before exit, whatever the pause/resume interleaving (property)', async () => {
    type Step = { kind: 'data'; data: string } | { kind: 'pause' } | { kind: 'resume' }
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.string({ minLength: 1, maxLength: 3 }).map((data): Step => ({ kind: 'data', data })),
      fc.constant<Step>({ kind: 'pause' }),
      fc.constant<Step>({ kind: 'resume' }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), fc.array(step, { maxLength: 4 }), async (before, after) => {
        const { provider, log } = setup()
        const { id } = await provider.spawn({})
        const run = (steps: Step[]): void => {
          for (const s of steps) {
            if (s.kind === 'data') provider.emitData(id, s.data)
            else if (s.kind === 'pause') provider.pauseProducer(id)
            else provider.resumeProducer(id)
          }
        }
        run(before)
        provider.emitExit(id, { exitCode: 7 })
        run(after.filter((s) => s.kind !== 'data'))
        provider.resumeProducer(id)
        const expected = before.flatMap((s) => (s.kind === 'data' ? [`data:${s.data}`] : []))
        expect(kinds(log)).toEqual([...expected, 'exit:7'])
      }),
      { numRuns: 80 },
    )
  })
})

describe('createFakePtyProvider: attach', () => {
  it('should attach to a live PTY by session id with the same incarnation and a continued sequence', async () => {
    const provider = createFakePtyProvider()
    const spawned = await provider.spawn({})
    provider.emitData(spawned.id, 'hello')
    const committed = vi.fn()
    const attached = await provider.spawn({ attachOnly: true, sessionId: spawned.id, onPtySpawnCommitted: committed })
    expect(attached).toMatchObject({
      id: spawned.id,
      incarnationId: spawned.incarnationId,
      isReattach: true,
      providerSequence: { value: 5, generation: 'continued' },
    })
    expect(committed).not.toHaveBeenCalled()
    expect(provider.getPty(spawned.id)?.incarnations).toHaveLength(1)
  })

  it('should attach when expectedIncarnationId matches', async () => {
    const provider = createFakePtyProvider()
    const spawned = await provider.spawn({})
    const attached = await provider.spawn({
      attachOnly: true,
      sessionId: spawned.id,
      expectedIncarnationId: spawned.incarnationId as PtyIncarnationId,
    })
    expect(attached.incarnationId).toBe(spawned.incarnationId)
  })

  it('should reject with a typed FakePtyAbsentError when the id is absent or exited, a FakePtyLiveOtherIncarnationError for another live incarnation, and never start a process', async () => {
    const provider = createFakePtyProvider()
    const spawned = await provider.spawn({})
    const exited = await provider.spawn({})
    provider.emitExit(exited.id, { exitCode: 0 })

    const absent = await provider.spawn({ attachOnly: true, sessionId: 'ghost' }).catch((error: unknown) => error)
    expect(absent).toBeInstanceOf(FakePtyAbsentError)
    expect(absent).toMatchObject({ code: 'pty_absent', ptyId: 'ghost', name: 'FakePtyAbsentError' })
    expect(isFakePtyAbsentError(absent)).toBe(true)

    await expect(provider.spawn({ attachOnly: true, sessionId: exited.id })).rejects.toMatchObject({ code: 'pty_absent' })
    await expect(provider.spawn({ attachOnly: true })).rejects.toMatchObject({ code: 'pty_absent', ptyId: undefined })

    const wrong = await provider
      .spawn({ attachOnly: true, sessionId: spawned.id, expectedIncarnationId: toPtyIncarnationId('older') })
      .catch((error: unknown) => error)
    expect(wrong).toBeInstanceOf(FakePtyLiveOtherIncarnationError)
    expect(wrong).toMatchObject({
      code: 'pty_live_other_incarnation',
      expectedIncarnationId: 'older',
      liveIncarnationId: spawned.incarnationId,
    })
    expect((wrong as Error).message).toContain('not the expected "older"')
    expect(provider.livePtyIds()).toEqual([spawned.id])
    expect(isFakePtyAbsentError(new Error('pty_absent'))).toBe(false)
  })

  it('should re-attach a non-new session spawn to its live PTY, and create one for a new session id', async () => {
    const provider = createFakePtyProvider()
    const created = await provider.spawn({ sessionId: 'session-a', isNewSession: true })
    expect(created).toMatchObject({ id: 'session-a', isReattach: false })
    const again = await provider.spawn({ sessionId: 'session-a' })
    expect(again).toMatchObject({ id: 'session-a', isReattach: true, incarnationId: created.incarnationId })
  })
})
