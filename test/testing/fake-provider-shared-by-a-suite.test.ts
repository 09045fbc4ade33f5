/**
 * One fake provider shared by a whole test suite (created once at module level, a controller per
 * test): a soak of 6 000 such tests grew the heap by ~34 KB a test (220 MB), found by helper-160.
 *
 * - Every disposed controller stayed alive: the fake's call log keeps each call's arguments as
 *   passed — the controller's `onData`/`onExit` listeners among them — and each PTY's record keeps
 *   its spawn options, whose `onPtySpawnCommitted` held the spawn's whole pipeline run and, through
 *   it, the controller. The controller's listeners and commit hook now reach it only while it is
 *   subscribed and the provider's spawn is out (`provider-intake.ts`, `fresh-spawn-stage.ts`).
 * - Every ended PTY kept all of its output: the fake's screen buffer, which nobody can read once
 *   the PTY ended (its snapshot is `null`). It goes at the exit.
 *
 * What a test reads stays: `calls`, and `getPty(id)` for every PTY ever spawned, writes and all.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakeProviderMethods } from '../../src/testing/fake-provider-methods.js'
import { createFakeProviderState } from '../../src/testing/fake-provider-state.js'
import { createFakeTestControls } from '../../src/testing/fake-test-controls.js'
import { createFakePtyProvider, type FakePtyProvider } from '../../src/testing/index.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Collect garbage until `ref` is cleared (a few rounds: finalization runs between turns). */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let round = 0; round < 5 && ref.deref() !== undefined; round++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
  }
  return ref.deref() === undefined
}

/** One "test" of a suite: a controller of its own over the suite's provider, disposed at its end. */
async function oneTest(provider: FakePtyProvider, spawn: boolean): Promise<WeakRef<object>> {
  const controller = createPtyController({ provider })
  if (spawn) {
    const { id } = await controller.spawn({ file: 'make', onPtySpawnCommitted: () => {} })
    provider.emitData(id, 'building…\r\n')
    expect(await controller.stopAndWait(id, { timeoutMs: 1_000 })).toBe(true)
  }
  await controller.dispose()
  return new WeakRef(controller)
}

describe('a fake provider shared by many tests', () => {
  it('keeps no disposed controller alive through the listeners its call log keeps', async () => {
    const provider = createFakePtyProvider()
    const ref = await oneTest(provider, false)
    expect(provider.calls.some((call) => call.method === 'onData')).toBe(true)
    expect(await collected(ref)).toBe(true)
  })

  it('keeps no disposed controller alive through the spawn options its PTY records keep', async () => {
    const provider = createFakePtyProvider()
    const ref = await oneTest(provider, true)
    // The call log is a test's to clear; the PTY records stay (getPty answers for every PTY).
    provider.clearCalls()
    expect(provider.getPty('fake-1')?.spawnOptions.onPtySpawnCommitted).toBeTypeOf('function')
    expect(await collected(ref)).toBe(true)
  })

  it('still records what a test reads of every PTY it ran', async () => {
    const provider = createFakePtyProvider()
    await oneTest(provider, true)
    await oneTest(provider, true)
    expect(provider.getPty('fake-1')).toMatchObject({ live: false, spawnOptions: { file: 'make' }, producedChars: 'building…\r\n'.length })
    expect(provider.getPty('fake-2')?.exit?.cause).toEqual({ kind: 'signaled', signal: 1 })
    expect(provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(2)
  })

  it('an ended PTY keeps none of its output (its screen is never read again)', async () => {
    const state = createFakeProviderState({})
    const provider = { ...createFakeProviderMethods(state), ...createFakeTestControls(state) }
    const ended = await provider.spawn({})
    const unreported = await provider.spawn({})
    const live = await provider.spawn({})
    for (const { id } of [ended, unreported, live]) provider.emitData(id, 'x'.repeat(1_000))
    provider.emitExit(ended.id, { exitCode: 0 })
    provider.setShutdownBehaviour(unreported.id, 'exit_unreported')
    await provider.shutdown(unreported.id)
    expect(state.ptys.get(ended.id)?.buffer).toBe('')
    expect(state.ptys.get(unreported.id)?.buffer).toBe('')
    expect(state.ptys.get(live.id)?.buffer).toHaveLength(1_000)
    expect(await provider.getBufferSnapshot(ended.id)).toBeNull()
    expect(provider.getPty(ended.id)?.producedChars).toBe(1_000)
  })
})
