// The runtime's output-sequence answers the controller reads around the pipeline, checked as the
// pipeline checks them (stage 5: the sequence read before the provider is asked; stage 11: the
// rebase's answer):
// - `attach(id)` reads `getPtyOutputSequence(id)` before it asks the provider, for its rebase. An
//   answer that is no sequence was handed to the rebase unchecked (and a throw was not reported);
//   it is now reported (`bookkeeping_failed`, naming the hook, the PTY and the answer) and the
//   attach answers `false` before the provider is asked — as it does for a rebase the runtime fails.
// - a process the controller started without a `providerSequence` in its reply is told to the
//   runtime as a new stream (`startRuntimeStream`): its `getPtyOutputSequence` read and its
//   rebase's answer were both ignored. A malformed read is now reported and not rebased on; a
//   malformed rebase answer is reported and undone (`undoPtyOutputSequenceSync`).
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from '../../src/controller/index.js'
import { describeValue } from '../../src/contracts/describe-value.js'
import type { PtyProvider, PtySpawnOptions } from '../../src/contracts/index.js'
import { createInMemoryPtyRuntime } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { providerWithoutSequence } from '../support/without-provider-sequence.js'

const MALFORMED: readonly unknown[] = ['x', Number.NaN, -1, Number.POSITIVE_INFINITY, { sequence: 3 }, true]

const label = (answer: unknown): string => (typeof answer === 'object' && answer !== null ? JSON.stringify(answer) : typeof answer === 'string' ? JSON.stringify(answer) : String(answer))

/** A fake provider counting the spawn calls (attach-only ones too) made through it. */
function countingProvider() {
  const fake = createFakePtyProvider()
  const calls: PtySpawnOptions[] = []
  const provider: PtyProvider = Object.create(fake) as PtyProvider
  provider.spawn = (options) => {
    calls.push(options)
    return fake.spawn(options)
  }
  return { fake, provider, calls }
}


/**
 * The in-memory runtime whose `getPtyOutputSequence` answers `answer`, recording the sequence each
 * rebase (`synchronizePtyOutputSequenceFromProvider`) is handed as the one read before (`handed`).
 */
function runtimeReading(answer: unknown) {
  const inner = createInMemoryPtyRuntime()
  const handed: unknown[] = []
  const runtime = {
    ...inner,
    getPtyOutputSequence: () => answer as number,
    synchronizePtyOutputSequenceFromProvider: (...args: Parameters<typeof inner.synchronizePtyOutputSequenceFromProvider>) => {
      handed.push(args[2])
      return inner.synchronizePtyOutputSequenceFromProvider(...args)
    },
  }
  return { runtime, handed }
}

describe("attach(): the runtime's sequence read before the provider is asked", () => {
  for (const answer of MALFORMED) {
    it(`${label(answer)}: reported naming the hook, the PTY and the answer; the attach answers false before the provider is asked`, async () => {
      const { fake, provider, calls } = countingProvider()
      await fake.spawn({ sessionId: 'elsewhere', file: '/bin/sh' })
      const inner = createInMemoryPtyRuntime()
      let malformed = true
      let rebases = 0
      const runtime = {
        ...inner,
        getPtyOutputSequence: (ptyId: string) => (malformed ? (answer as number) : inner.getPtyOutputSequence(ptyId)),
        synchronizePtyOutputSequenceFromProvider: (...args: Parameters<typeof inner.synchronizePtyOutputSequenceFromProvider>) => {
          rebases++
          return inner.synchronizePtyOutputSequenceFromProvider(...args)
        },
      }
      const controller = createPtyController({ provider, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))

      await expect(controller.attach('elsewhere')).resolves.toBe(false)
      expect(calls).toEqual([])
      expect(rebases).toBe(0)
      expect(errors.map((error) => [error.code, error.ptyId])).toEqual([['bookkeeping_failed', 'elsewhere']])
      expect(errors[0]!.message).toMatch(/^The runtime's getPtyOutputSequence answered .+ for PTY "elsewhere": expected an output sequence \(a finite number ≥ 0\)$/)
      // Nothing of the attach is left: a kill of the id has nothing to stop, the PTY runs on.
      expect(controller.kill('elsewhere')).toBe(false)
      expect(fake.livePtyIds()).toEqual(['elsewhere'])
      // A sound answer attaches it.
      malformed = false
      await expect(controller.attach('elsewhere')).resolves.toBe(true)
      expect(controller.hasPty('elsewhere')).toBe(true)
      await controller.dispose({ stopPtys: false })
    })
  }

  it('a throwing read is reported too (it answered false silently)', async () => {
    const { fake, provider, calls } = countingProvider()
    await fake.spawn({ sessionId: 'elsewhere', file: '/bin/sh' })
    const inner = createInMemoryPtyRuntime()
    const runtime = {
      ...inner,
      getPtyOutputSequence: () => {
        throw new Error('runtime sequence table is down')
      },
    }
    const controller = createPtyController({ provider, runtime })
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    await expect(controller.attach('elsewhere')).resolves.toBe(false)
    expect(calls).toEqual([])
    expect(errors.map((error) => [error.code, error.message, error.ptyId, (error.cause as Error).message])).toEqual([
      ['bookkeeping_failed', 'The runtime threw from getPtyOutputSequence', 'elsewhere', 'runtime sequence table is down'],
    ])
    await controller.dispose({ stopPtys: false })
  })

  it('a sequence is handed to the rebase as it was read; undefined and null as 0, unreported (the seed reads the hook `?? 0`)', async () => {
    for (const [answer, before] of [[7, 7], [undefined, 0], [null, 0]] as const) {
      const { fake, provider } = countingProvider()
      await fake.spawn({ sessionId: 'elsewhere', file: '/bin/sh' })
      const { runtime, handed } = runtimeReading(answer)
      const controller = createPtyController({ provider, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      await expect(controller.attach('elsewhere')).resolves.toBe(true)
      expect(handed).toEqual([before])
      expect(errors).toEqual([])
      await controller.dispose({ stopPtys: false })
    }
  })
})

describe('a started stream (no providerSequence in the reply): the runtime answers checked', () => {
  for (const answer of MALFORMED) {
    it(`getPtyOutputSequence answering ${label(answer)}: reported, and not rebased on`, async () => {
      const { fake, provider } = providerWithoutSequence()
      const { runtime, handed } = runtimeReading(answer)
      const controller = createPtyController({ provider, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      // No session id: the pipeline expects no id, and reads no sequence before the provider call.
      const { id: ptyId } = await controller.spawn({ file: '/bin/sh' })
      expect(handed).toEqual([])
      // Reported once: by the stream start, whose refused read the record takes as 0 (it read the
      // runtime again, and was told the same answer a second time).
      expect(errors).toHaveLength(1)
      for (const error of errors) {
        expect([error.code, error.ptyId]).toEqual(['bookkeeping_failed', ptyId])
        expect(error.message).toMatch(/^The runtime's getPtyOutputSequence answered .+ for PTY "[^"]+": expected an output sequence \(a finite number ≥ 0\)$/)
      }
      expect(errors[0]!.message).toContain(`for PTY ${JSON.stringify(ptyId)}`)
      // The PTY is running and tracked: the spawn is not failed for its bookkeeping.
      expect(controller.hasPty(ptyId)).toBe(true)
      expect(fake.livePtyIds()).toEqual([ptyId])
      await controller.dispose()
    })
  }

  for (const answer of ['seventeen', Number.NaN, -1, Number.POSITIVE_INFINITY, { value: 3 }, true]) {
    it(`the rebase answering ${label(answer)}: reported naming the hook, the PTY and the answer, and undone`, async () => {
      const { fake, provider } = providerWithoutSequence()
      const inner = createInMemoryPtyRuntime()
      let undone = 0
      const runtime = {
        ...inner,
        synchronizePtyOutputSequenceFromProvider: (...args: Parameters<typeof inner.synchronizePtyOutputSequenceFromProvider>) => {
          inner.synchronizePtyOutputSequenceFromProvider(...args)
          return answer as number
        },
        undoPtyOutputSequenceSync: (id: string) => {
          undone++
          inner.undoPtyOutputSequenceSync(id)
        },
      }
      const controller = createPtyController({ provider, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      const seqs: unknown[] = []
      controller.on('data', (event) => seqs.push(event.seq))
      const { id: ptyId } = await controller.spawn({ file: '/bin/sh' })
      expect(undone).toBe(1)
      expect(errors.map((error) => [error.code, error.ptyId])).toEqual([['bookkeeping_failed', ptyId]])
      expect(errors[0]!.message).toBe(
        `The runtime's synchronizePtyOutputSequenceFromProvider answered ${describeValue(answer)} for PTY ${JSON.stringify(ptyId)}: expected the reconciled sequence (a finite number ≥ 0) or null`,
      )
      // Running and tracked; its data events carry numeric sequences.
      expect(controller.hasPty(ptyId)).toBe(true)
      fake.emitData(ptyId, 'abc')
      await fake.settle()
      expect(seqs.length).toBeGreaterThan(0)
      expect(seqs.every((seq) => typeof seq === 'number' && Number.isFinite(seq))).toBe(true)
      await controller.dispose()
    })
  }

  it("the record counts on from the stream start's answer, as from the pipeline's rebase (a sequence; the read for null)", async () => {
    for (const [answer, read, first] of [[12, 0, 15], [null, 7, 10]] as const) {
      const { fake, provider } = providerWithoutSequence()
      const inner = createInMemoryPtyRuntime()
      const { notePtyOutput: _counted, ...rest } = inner
      const runtime = {
        ...rest,
        getPtyOutputSequence: () => read,
        synchronizePtyOutputSequenceFromProvider: () => answer,
      }
      const controller = createPtyController({ provider, runtime })
      const seqs: number[] = []
      controller.on('data', (event) => seqs.push(event.seq))
      const { id: ptyId } = await controller.spawn({ file: '/bin/sh' })
      fake.emitData(ptyId, 'abc')
      await fake.settle()
      expect(seqs[0]).toBe(first)
      await controller.dispose()
    }
  })

  it('null and a sequence are accepted: nothing reported, nothing undone', async () => {
    for (const answer of [null, 0, 12]) {
      const { provider } = providerWithoutSequence()
      const inner = createInMemoryPtyRuntime()
      let undone = 0
      const runtime = {
        ...inner,
        synchronizePtyOutputSequenceFromProvider: () => answer,
        undoPtyOutputSequenceSync: () => {
          undone++
        },
      }
      const controller = createPtyController({ provider, runtime })
      const errors: PtyControllerError[] = []
      controller.on('error', (error) => errors.push(error))
      await controller.spawn({ file: '/bin/sh' })
      expect(errors).toEqual([])
      expect(undone).toBe(0)
      await controller.dispose()
    }
  })
})


describe('one wording for a malformed sequence answer, in the pipeline and the controller', () => {
  it('getPtyOutputSequence: the pipeline refusing a spawn and the controller refusing an attach tell the same answer the same way', async () => {
    const { fake, provider } = countingProvider()
    await fake.spawn({ sessionId: 'p', file: '/bin/sh' })
    const inner = createInMemoryPtyRuntime()
    const runtime = { ...inner, getPtyOutputSequence: () => Number.NaN }
    const controller = createPtyController({ provider, runtime })
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    await expect(controller.attach('p')).resolves.toBe(false)
    const refused = await controller.spawn({ sessionId: 'p', file: '/bin/sh' }).then(
      () => undefined,
      (error: unknown) => error as Error,
    )
    const expected = `The runtime's getPtyOutputSequence answered NaN (number) for PTY "p": expected an output sequence (a finite number ≥ 0)`
    expect(errors.map((error) => error.message)).toEqual([expected])
    expect(refused?.message).toBe(expected)
    await controller.dispose({ stopPtys: false })
  })

  it('the rebase: the same wording, with what a rebase may answer (a sequence or null)', async () => {
    const { provider } = providerWithoutSequence()
    const inner = createInMemoryPtyRuntime()
    const runtime = { ...inner, synchronizePtyOutputSequenceFromProvider: () => 'x' as unknown as number }
    const controller = createPtyController({ provider, runtime })
    const errors: PtyControllerError[] = []
    controller.on('error', (error) => errors.push(error))
    const { id } = await controller.spawn({ file: '/bin/sh' })
    expect(errors.map((error) => error.message)).toEqual([
      `The runtime's synchronizePtyOutputSequenceFromProvider answered "x" (string) for PTY ${JSON.stringify(id)}: expected the reconciled sequence (a finite number ≥ 0) or null`,
    ])
    await controller.dispose()
  })
})
