import { describe, expect, it } from 'vitest'
import { toPtyIncarnationId } from '../../src/contracts/index.js'
import {
  createInMemoryPtyRuntime,
  isPtyExitedDuringStartError,
  PTY_EXITED_DURING_START_ERROR_CODE,
} from '../../src/spawn/index.js'

const inc1 = toPtyIncarnationId('inc-1')
const inc2 = toPtyIncarnationId('inc-2')

describe('createInMemoryPtyRuntime: pending registrations and early-exit fences', () => {
  it('an exit while a wildcard registration is pending sets a fence; admission then throws a typed exited-during-start error', () => {
    const runtime = createInMemoryPtyRuntime()
    runtime.beginPtyRegistration('p', null)
    runtime.notePtyExit('p', inc1)
    expect(runtime.inspect().earlyExitFences).toEqual([{ ptyId: 'p', incarnationId: 'inc-1' }])
    let thrown: unknown
    try {
      runtime.assertPtyRegistrationAllowed('p', inc1)
    } catch (error) {
      thrown = error
    }
    expect(isPtyExitedDuringStartError(thrown)).toBe(true)
    expect((thrown as { code: string }).code).toBe(PTY_EXITED_DURING_START_ERROR_CODE)
    expect(() => runtime.commitPtyRegistration('p', inc1)).toThrow(/exited while its registration was pending/)
    expect(runtime.isPtyRegistered('p')).toBe(false)
  })

  it('two different attested incarnations do not collide: the stale fence is dropped', () => {
    const runtime = createInMemoryPtyRuntime()
    runtime.beginPtyRegistration('p', null)
    runtime.notePtyExit('p', inc1)
    expect(() => runtime.assertPtyRegistrationAllowed('p', inc2)).not.toThrow()
    expect(runtime.inspect().earlyExitFences).toEqual([])
    runtime.commitPtyRegistration('p', inc2)
    expect(runtime.inspect().registeredPtys).toEqual([{ ptyId: 'p', incarnationId: 'inc-2' }])
  })

  it('an exit without a pending registration sets no fence; an exit of another incarnation leaves a registered PTY alone', () => {
    const runtime = createInMemoryPtyRuntime()
    runtime.notePtyExit('p', inc1)
    expect(runtime.inspect().earlyExitFences).toEqual([])
    runtime.beginPtyRegistration('p', inc2)
    runtime.commitPtyRegistration('p', inc2)
    runtime.notePtyExit('p', inc1)
    expect(runtime.isPtyRegistered('p')).toBe(true)
    runtime.notePtyExit('p', inc2)
    expect(runtime.isPtyRegistered('p')).toBe(false)
  })

  it('cancelling the last pending registration of an id drops its fences; counted registrations cancel one at a time', () => {
    const runtime = createInMemoryPtyRuntime()
    runtime.beginPtyRegistration('p', null)
    runtime.beginPtyRegistration('p', inc1)
    runtime.notePtyExit('p', undefined)
    runtime.cancelPendingPtyRegistration('p', inc1)
    expect(runtime.inspect().pendingRegistrations).toEqual([{ ptyId: 'p', incarnationId: null }])
    expect(runtime.inspect().earlyExitFences).toHaveLength(1)
    runtime.cancelPendingPtyRegistration('p', null)
    runtime.cancelPendingPtyRegistration('p', null)
    expect(runtime.inspect().pendingRegistrations).toEqual([])
    expect(runtime.inspect().earlyExitFences).toEqual([])
  })
})

describe('createInMemoryPtyRuntime: handles, sequences, contexts', () => {
  it('admitted handles are counted: two admissions need two revocations', () => {
    const runtime = createInMemoryPtyRuntime()
    runtime.admitHandle('h')
    runtime.admitHandle('h')
    runtime.revokeHandle('h')
    expect(runtime.isHandleAdmitted('h')).toBe(true)
    runtime.revokeHandle('h')
    expect(runtime.isHandleAdmitted('h')).toBe(false)
    expect(runtime.inspect().admittedHandles).toEqual([])
  })

  it('notePtyOutput counts raw chars and validates its argument', () => {
    const runtime = createInMemoryPtyRuntime()
    expect(runtime.notePtyOutput('p', 5)).toBe(5)
    expect(runtime.notePtyOutput('p', 3)).toBe(8)
    expect(runtime.getPtyOutputSequence('p')).toBe(8)
    expect(runtime.getPtyOutputSequence('unknown')).toBe(0)
    expect(() => runtime.notePtyOutput('p', -1)).toThrow(new TypeError('Expected the `chars` option to be a non-negative integer, got -1 (number)'))
  })

  it('a rebase can be undone once, back to exactly the state before it', () => {
    const runtime = createInMemoryPtyRuntime()
    const empty = runtime.inspect()
    expect(runtime.synchronizePtyOutputSequenceFromProvider('p', { value: 40, generation: 'continued' }, 0)).toBe(40)
    runtime.undoPtyOutputSequenceSync('p')
    expect(runtime.inspect()).toEqual(empty)
    runtime.notePtyOutput('p', 7)
    const before = runtime.inspect()
    expect(runtime.synchronizePtyOutputSequenceFromProvider('p', { value: 40, generation: 'reset' }, 7)).toBe(7)
    runtime.undoPtyOutputSequenceSync('p')
    expect(runtime.inspect()).toEqual(before)
    expect(runtime.synchronizePtyOutputSequenceFromProvider('p', { value: Number.NaN, generation: 'continued' }, 0)).toBeNull()
    expect(runtime.inspect()).toEqual(before)
  })

  it('forgetPty drops the sequence and context of an exited PTY, unless its id is registered or pending again', () => {
    const runtime = createInMemoryPtyRuntime()
    const publish = (ptyId: string, incarnationId: typeof inc1): void => {
      runtime.beginPtyRegistration(ptyId, null)
      runtime.preparePtyExecutionContext(ptyId, { hostId: 'local' })
      runtime.commitPtyRegistration(ptyId, incarnationId)
      runtime.notePtyOutput(ptyId, 4)
    }
    publish('p', inc1)
    runtime.forgetPty('p')
    expect(runtime.inspect().outputSequences).toHaveLength(1)
    runtime.notePtyExit('p', inc1)
    // An exit alone keeps them: an unverified one may be followed by a re-attach.
    expect(runtime.inspect().outputSequences).toHaveLength(1)
    runtime.forgetPty('p')
    expect(runtime.inspect().outputSequences).toEqual([])
    expect(runtime.inspect().executionContexts).toEqual([])
    publish('q', inc1)
    runtime.notePtyExit('q', inc1)
    runtime.beginPtyRegistration('q', null)
    runtime.forgetPty('q')
    expect(runtime.getPtyOutputSequence('q')).toBe(4)
    expect(runtime.getPtyExecutionContext('q')).toEqual({ hostId: 'local' })
  })

  it('execution contexts are prepared and cleared per PTY', () => {
    const runtime = createInMemoryPtyRuntime()
    runtime.preparePtyExecutionContext('p', { hostId: 'ssh:box' })
    expect(runtime.getPtyExecutionContext('p')).toEqual({ hostId: 'ssh:box' })
    runtime.clearPtyExecutionContext('p')
    expect(runtime.getPtyExecutionContext('p')).toBeUndefined()
  })
})

describe('createInMemoryPtyRuntime: scope leases', () => {
  it('spawns share a scope; an exclusive holder waits for them, and later spawns wait for it', async () => {
    const runtime = createInMemoryPtyRuntime()
    const a = await runtime.acquireScopeSpawn('w')
    const b = await runtime.acquireScopeSpawn('w')
    let exclusiveHeld = false
    const exclusive = runtime.acquireScopeExclusive('w').then((release) => {
      exclusiveHeld = true
      return release
    })
    let lateSpawn = false
    const late = Promise.resolve(runtime.acquireScopeSpawn('w')).then((release) => {
      lateSpawn = true
      return release
    })
    const sibling = await runtime.acquireScopeSpawn('other')
    await Promise.resolve()
    expect(exclusiveHeld).toBe(false)
    a()
    a()
    await Promise.resolve()
    expect(exclusiveHeld).toBe(false)
    b()
    const releaseExclusive = await exclusive
    expect(exclusiveHeld).toBe(true)
    expect(lateSpawn).toBe(false)
    releaseExclusive()
    const releaseLate = await late
    expect(lateSpawn).toBe(true)
    releaseLate()
    sibling()
    expect(runtime.inspect().heldLeases).toEqual([])
  })
})
