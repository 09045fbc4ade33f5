import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PtyProvider } from '../../src/contracts/index.js'
import { createPtyController, RENDERER_SERIALIZE_TIMEOUT_MS, type PtyControllerInputModesResetEvent } from '../../src/controller/index.js'
import { INPUT_MODE_RESET_SEQUENCE } from '../../src/controller/input-mode-reset.js'
import { createInMemorySlotStore, isPtySpawnError } from '../../src/spawn/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { createManualClock } from '../../src/testing/manual-clock.js'
import { answerOf, createHarness } from './controller-harness.js'
import { describeValue } from '../../src/contracts/describe-value.js'

const slot = { scopeId: 'ws', key: 'pane-1' }

/** Provider spawns that started a process (not attach-only re-attaches). */
function freshSpawns(h: ReturnType<typeof createHarness>): number {
  return h.provider.calls.filter((call) => call.method === 'spawn' && (call.args[0] as { attachOnly?: boolean }).attachOnly !== true).length
}

/** Let the fake deliver until `promise` settles: slot spawns run one after another, each a pipeline of awaits. */
async function settleUntilDone<T>(h: ReturnType<typeof createHarness>, promise: Promise<T>): Promise<T> {
  let done = false
  const tracked = promise.finally(() => {
    done = true
  })
  for (let round = 0; round < 100 && !done; round++) await h.settle()
  return tracked
}

describe('foreground evidence', () => {
  it('answers the provider’s confirmed evidence, and null / false when it cannot confirm', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    // The fake confirms nothing until told: unknown is null (name) and false (shell), never a guess.
    expect(await h.controller.confirmForegroundProcess(id)).toBeNull()
    expect(await h.controller.confirmShellForeground(id)).toBe(false)
    h.provider.setProcessInfo(id, { foregroundEvidence: { foregroundProcess: 'bash', shellForeground: true } })
    expect(await h.controller.confirmForegroundProcess(id)).toBe('bash')
    expect(await h.controller.confirmShellForeground(id)).toBe(true)
    h.provider.setProcessInfo(id, { foregroundEvidence: { foregroundProcess: 'vim', shellForeground: false } })
    expect(await h.controller.confirmForegroundProcess(id)).toBe('vim')
    expect(await h.controller.confirmShellForeground(id)).toBe(false)
    expect(await h.controller.confirmForegroundProcess('nope')).toBeNull()
    expect(await h.controller.confirmShellForeground('nope')).toBe(false)
    h.provider.emitExit(id, { exitCode: 0 })
    expect(await h.controller.confirmForegroundProcess(id)).toBeNull()
    expect(await h.controller.confirmShellForeground(id)).toBe(false)
  })

  it('never answers true on a provider error, and reports it', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.confirmForeground = () => Promise.reject(new Error('boom'))
    expect(await h.controller.confirmShellForeground(id)).toBe(false)
    expect(h.errors().map((error) => error.code)).toEqual(['provider_threw'])
  })

  it('says which hosts can give evidence: per provider, false for an unknown host or one that denies it', async () => {
    const local = createFakePtyProvider()
    const remote = createFakePtyProvider({ hostId: 'ssh:box', foregroundProcessEvidence: false })
    const controller = createPtyController({ providers: { local, 'ssh:box': remote } })
    expect(await controller.supportsForegroundProcessEvidence()).toBe(true)
    expect(await controller.supportsForegroundProcessEvidence('local')).toBe(true)
    expect(await controller.supportsForegroundProcessEvidence('ssh:box')).toBe(false)
    expect(await controller.supportsForegroundProcessEvidence('ssh:nowhere')).toBe(false)
    await controller.dispose()
  })

  it('adds evidence to listing rows only when asked', async () => {
    const h = createHarness()
    const first = await h.controller.spawn({})
    const second = await h.controller.spawn({})
    h.provider.setProcessInfo(first.id, { foregroundEvidence: { foregroundProcess: 'zsh', shellForeground: true } })
    const plain = await h.run(h.controller.listProcesses('local'))
    expect(plain.every((row) => !('foregroundProcessEvidence' in row))).toBe(true)
    expect(h.provider.calls.some((call) => call.method === 'confirmForeground')).toBe(false)
    const withEvidence = await h.run(h.controller.listProcessesWithHostScope({ includeForegroundProcessEvidence: true }))
    const byId = new Map(withEvidence.processes.map((row) => [row.id, row.foregroundProcessEvidence]))
    expect(byId.get(first.id)).toEqual({ foregroundProcess: 'zsh', shellForeground: true })
    expect(byId.get(second.id)).toBeNull()
  })

  it('a malformed listing asks for no foreground evidence, and fails as malformed', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.listProcesses = async () => [{ id, hostId: 'local', cwd: null, title: 'x', incarnationId: null }] as never
    await expect(h.run(h.controller.listProcessesWithHostScope({ includeForegroundProcessEvidence: true }))).rejects.toMatchObject({
      code: 'listing_failed',
      message: expect.stringMatching(/malformed listing/),
    })
    // Before: each row's foreground was confirmed first, for rows the listing then refused.
    expect(h.provider.calls.some((call) => call.method === 'confirmForeground')).toBe(false)
  })

  it('inspectProcess scans children only when asked', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.setProcessInfo(id, { hasChildProcesses: true })
    expect(await h.controller.inspectProcess(id)).toEqual({ foregroundProcess: 'fake-shell', hasChildProcesses: null })
    expect(h.provider.calls.some((call) => call.method === 'hasChildProcesses')).toBe(false)
    expect(await h.controller.inspectProcess(id, { scanChildProcesses: true })).toEqual({ foregroundProcess: 'fake-shell', hasChildProcesses: true })
  })
})

describe('resetInputModes', () => {
  it('hands the reset sequences to the view (not the process, not the seq) and lets the provider reset its screen', async () => {
    const h = createHarness()
    const { id, incarnationId } = await h.controller.spawn({})
    const resets: PtyControllerInputModesResetEvent[] = []
    h.controller.on('inputModesReset', (event) => resets.push(event))
    await h.controller.resetInputModes(id)
    expect(resets).toEqual([{ ptyId: id, hostId: 'local', incarnationId, data: INPUT_MODE_RESET_SEQUENCE }])
    expect(h.provider.getPty(id)?.inputModeResets).toBe(1)
    expect(h.provider.getPty(id)?.written).toBe('')
    expect(h.data()).toEqual([])
  })

  it('does nothing for an unknown or exited PTY', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitExit(id, { exitCode: 0 })
    const resets: unknown[] = []
    h.controller.on('inputModesReset', (event) => resets.push(event))
    await h.controller.resetInputModes(id)
    await h.controller.resetInputModes('nope')
    expect(resets).toEqual([])
  })
})

describe('renderer serializers and serializeBuffer', () => {
  it('answers from the provider snapshot without a renderer, aligned with the data stream by seq', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'hello ')
    h.provider.emitData(id, 'world')
    const snapshot = await h.controller.serializeBuffer(id)
    expect(snapshot).toEqual({ data: 'hello world', cols: 80, rows: 24, seq: 11 })
    h.provider.emitData(id, '!!')
    // Paint the snapshot, then follow data from its seq: every byte once.
    let view = snapshot!.data
    for (const event of h.data()) {
      const start = event.seq - event.data.length
      if (event.seq > snapshot!.seq!) view += event.data.slice(Math.max(0, snapshot!.seq! - start))
    }
    expect(view).toBe('hello world!!')
  })

  it('prefers a registered renderer, falls back when it answers null or throws, and forgets it on dispose', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abc')
    expect(h.controller.hasRendererSerializer(id)).toBe(false)
    expect(h.controller.getRendererSerializerGeneration(id)).toBe(0)
    let answer: unknown = { data: 'RENDERED', cols: 100, rows: 30, seq: 3, kittyKeyboardFlags: 1 }
    const registration = h.controller.registerRendererSerializer(id, () => {
      if (answer instanceof Error) throw answer
      return answer as never
    })
    expect(h.controller.hasRendererSerializer(id)).toBe(true)
    expect(h.controller.getRendererSerializerGeneration(id)).toBe(1)
    expect(await h.controller.serializeBuffer(id, { scrollbackRows: 10 })).toEqual(answer)
    answer = null
    expect(await h.controller.serializeBuffer(id)).toEqual({ data: 'abc', cols: 80, rows: 24, seq: 3 })
    answer = new Error('renderer gone')
    expect(await h.controller.serializeBuffer(id)).toEqual({ data: 'abc', cols: 80, rows: 24, seq: 3 })
    expect(h.errors().map((error) => error.code)).toEqual(['provider_threw'])
    registration.dispose()
    registration.dispose()
    expect(h.controller.hasRendererSerializer(id)).toBe(false)
    expect(h.controller.getRendererSerializerGeneration(id)).toBe(1)
  })

  // A webview's serializer posts to the webview and awaits its reply; the panel closes first.
  it('a renderer that never answers: its unmount falls back to the provider, dispose answers null', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abc')
    const registration = h.controller.registerRendererSerializer(id, () => new Promise(() => {}))
    let answer: unknown = 'pending'
    void h.controller.serializeBuffer(id).then((snapshot) => (answer = snapshot))
    await h.settle()
    expect(answer).toBe('pending') // the renderer is still registered: it may yet answer
    registration.dispose() // the view unmounted
    await h.settle()
    expect(answer).toEqual({ data: 'abc', cols: 80, rows: 24, seq: 3 })

    h.controller.registerRendererSerializer(id, () => new Promise(() => {}))
    let late: unknown = 'pending'
    void h.controller.serializeBuffer(id).then((snapshot) => (late = snapshot))
    await h.run(h.controller.dispose())
    await h.settle()
    expect(late).toBeNull()
    // Its wait cut short by dispose: no renderer's fault.
    expect(h.errors()).toEqual([])
  })

  // A webview whose process crashed keeps its registration: nobody unmounts the view.
  it('a renderer that never answers and stays registered: the provider answers after RENDERER_SERIALIZE_TIMEOUT_MS, renderer_unresponsive reported (before: the caller waited for ever)', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abc')
    h.controller.registerRendererSerializer(id, () => new Promise(() => {}))
    const answer = answerOf(h.controller.serializeBuffer(id))
    await h.settle()
    h.clock.advance(RENDERER_SERIALIZE_TIMEOUT_MS - 1)
    await h.settle()
    expect(answer()).toBeUndefined()
    h.clock.advance(1)
    await h.settle()
    expect(answer()).toEqual({ data: 'abc', cols: 80, rows: 24, seq: 3 })
    expect(h.errors().map(({ code, ptyId, message }) => ({ code, ptyId, message }))).toEqual([
      {
        code: 'renderer_unresponsive',
        ptyId: id,
        message: `A renderer serializer did not answer serializeBuffer within ${RENDERER_SERIALIZE_TIMEOUT_MS} ms; the provider's snapshot answered instead`,
      },
    ])
    // The registration stays: a renderer that answers again is asked first.
    expect(h.controller.hasRendererSerializer(id)).toBe(true)
  })

  it('timeoutMs bounds the wait; an answer in time is the renderer\'s, its timer cancelled, nothing reported', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abc')
    let reply: ((value: { data: string; cols: number; rows: number }) => void) | undefined
    h.controller.registerRendererSerializer(id, () => new Promise((resolve) => (reply = resolve)))
    const timers = h.clock.pendingTimerCount()
    const late = answerOf(h.controller.serializeBuffer(id, { timeoutMs: 100 }))
    await h.settle()
    h.clock.advance(100)
    await h.settle()
    expect(late()).toEqual({ data: 'abc', cols: 80, rows: 24, seq: 3 })
    const inTime = answerOf(h.controller.serializeBuffer(id, { timeoutMs: 100, scrollbackRows: 5 }))
    await h.settle()
    h.clock.advance(50)
    reply!({ data: 'RENDERED', cols: 100, rows: 30 })
    await h.settle()
    expect(inTime()).toEqual({ data: 'RENDERED', cols: 100, rows: 30 })
    expect(h.clock.pendingTimerCount()).toBe(timers)
    expect(h.errors().map((error) => error.code)).toEqual(['renderer_unresponsive'])
  })

  it('deadlineMs, an epoch time as everywhere, bounds the wait as timeoutMs does', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    h.provider.emitData(id, 'abc')
    h.controller.registerRendererSerializer(id, () => new Promise(() => {}))
    const answer = answerOf(h.controller.serializeBuffer(id, { deadlineMs: Date.now() + 200 }))
    await h.settle()
    h.clock.advance(100)
    await h.settle()
    expect(answer()).toBeUndefined()
    h.clock.advance(100)
    await h.settle()
    expect(answer()).toEqual({ data: 'abc', cols: 80, rows: 24, seq: 3 })
  })

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '100', null])('serializeBuffer refuses timeoutMs %s with a TypeError naming it', async (timeoutMs) => {
    const h = createHarness()
    // Typed (code, option, value) as every shared refusal since 7 Dec.
    await expect(h.controller.serializeBuffer('any', { timeoutMs: timeoutMs as number })).rejects.toThrow(
      Object.assign(new TypeError(`Expected the \`timeoutMs\` option to be a non-negative finite duration in milliseconds, got ${describeValue(timeoutMs)}`), {
        code: 'invalid_option',
        option: 'timeoutMs',
        value: timeoutMs,
      }),
    )
  })

  it('serializeBuffer refuses both wait forms at once, and a misspelt one, naming them', async () => {
    const h = createHarness()
    await expect(h.controller.serializeBuffer('any', { timeoutMs: 1, deadlineMs: Date.now() })).rejects.toThrow(/^Give either the `deadlineMs` option .* or the `timeoutMs` option/)
    await expect(h.controller.serializeBuffer('any', { timeoutMS: 1 } as never)).rejects.toThrow(/`timeoutMS`.*did you mean `timeoutMs`\?/)
  })

  it('a stale registration’s dispose leaves a newer one in place', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const old = h.controller.registerRendererSerializer(id, () => null)
    h.controller.registerRendererSerializer(id, () => ({ data: 'new', cols: 1, rows: 1 }))
    old.dispose()
    expect(h.controller.hasRendererSerializer(id)).toBe(true)
    expect(h.controller.getRendererSerializerGeneration(id)).toBe(2)
    expect(await h.controller.serializeBuffer(id)).toEqual({ data: 'new', cols: 1, rows: 1 })
  })

  it('null when neither a renderer nor the provider can answer', async () => {
    const h = createHarness()
    expect(await h.controller.serializeBuffer('nope')).toBeNull()
  })

  it('waitForRendererSerializer: true for a newer generation, false on timeout, abort and dispose', async () => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const waiting = h.controller.waitForRendererSerializer(id, 0, 1_000)
    h.controller.registerRendererSerializer(id, () => null)
    expect(await waiting).toBe(true)
    // Already newer than 0: at once.
    expect(await h.controller.waitForRendererSerializer(id, 0, 1_000)).toBe(true)
    const timedOut = h.controller.waitForRendererSerializer(id, 1, 1_000)
    h.clock.advance(999)
    let settled = false
    void timedOut.then(() => (settled = true))
    await h.settle()
    expect(settled).toBe(false)
    h.clock.advance(1)
    expect(await timedOut).toBe(false)
    const abort = new AbortController()
    const aborted = h.controller.waitForRendererSerializer(id, 1, 1_000, abort.signal)
    abort.abort()
    expect(await aborted).toBe(false)
    expect(await h.controller.waitForRendererSerializer(id, 1, 1_000, abort.signal)).toBe(false)
    const disposed = h.controller.waitForRendererSerializer(id, 1, 60_000)
    await h.run(h.controller.dispose())
    expect(await disposed).toBe(false)
    expect(h.clock.pendingTimerCount()).toBe(0)
  })

  it('rejects bad arguments with a TypeError naming them', async () => {
    const h = createHarness()
    expect(() => h.controller.registerRendererSerializer('x', 'nope' as never)).toThrow(/`serializer`/)
    await expect(h.controller.waitForRendererSerializer('x', -1)).rejects.toThrow(/afterGeneration/)
  })
})

describe('slot adoption', () => {
  it('two concurrent spawns of one slot create one PTY: the second re-attaches to it', async () => {
    const h = createHarness()
    const [first, second] = await settleUntilDone(h, Promise.all([h.controller.spawn({ slot }), h.controller.spawn({ slot })]))
    expect(second.id).toBe(first.id)
    expect(second.incarnationId).toBe(first.incarnationId)
    expect([first.isReattach, second.isReattach]).toEqual([false, true])
    expect(freshSpawns(h)).toBe(1)
  })

  it('claimSlotCreate holds other spawns of the slot until the release; the holder spawns inside it', async () => {
    const h = createHarness()
    const release = h.controller.claimSlotCreate(slot)
    let otherDone = false
    const other = h.controller.spawn({ slot }).then((reply) => {
      otherDone = true
      return reply
    })
    const mine = await h.run(h.controller.spawn({ slot, slotCreateClaim: release }))
    await h.settle()
    expect(otherDone).toBe(false)
    expect(mine.isReattach).toBe(false)
    release()
    release()
    const theirs = await h.run(other)
    expect(theirs).toMatchObject({ id: mine.id, isReattach: true })
    expect(freshSpawns(h)).toBe(1)
  })

  it('a claim of another slot, or a released claim, is refused with a TypeError naming the option', async () => {
    const h = createHarness()
    const release = h.controller.claimSlotCreate({ scopeId: 'ws', key: 'other' })
    await expect(h.controller.spawn({ slot, slotCreateClaim: release })).rejects.toThrow(/`slotCreateClaim`/)
    // The slot as the caller passed it, its scope included (before: the key alone, slot "pane").
    await expect(h.controller.spawn({ slot, slotCreateClaim: release })).rejects.toThrow(`claimSlotCreate claim of slot ${JSON.stringify(slot.key)} of scope ${JSON.stringify(slot.scopeId)}, got`)
    release()
    const again = h.controller.claimSlotCreate(slot)
    again()
    await expect(h.controller.adoptSlot({ slot, slotCreateClaim: again })).rejects.toThrow(/`slotCreateClaim`/)
    expect(() => h.controller.claimSlotCreate({ key: '' })).toThrow(/`slot`/)
    await expect(h.controller.adoptSlot({ slot: undefined as never })).rejects.toThrow(/`slot` option/)
  })

  it('dispose ends the wait of a spawn queued behind a claim nobody released', async () => {
    const h = createHarness()
    h.controller.claimSlotCreate(slot)
    const queued = h.controller.spawn({ slot }).catch((error: unknown) => error)
    await h.settle()
    await h.run(h.controller.dispose())
    expect(await queued).toMatchObject({ code: 'controller_disposed' })
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
  })

  it('adoptSlot answers null for a slot without an owner, and never spawns', async () => {
    const h = createHarness()
    expect(await h.controller.adoptSlot({ slot })).toBeNull()
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
  })

  it('adoptSlot adopts a live owner the controller tracks, without a provider call', async () => {
    const h = createHarness()
    const created = await h.run(h.controller.spawn({ slot }))
    h.provider.clearCalls()
    const adopted = await h.controller.adoptSlot({ slot })
    expect(adopted).toEqual({
      result: { id: created.id, pid: created.pid, incarnationId: created.incarnationId, hostId: 'local', isReattach: true },
      owner: { ptyId: created.id, hostId: 'local', incarnationId: created.incarnationId },
    })
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
  })

  it('adoptSlot materializes an owner another controller created (attach-only), and answers null once it exited', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    const created = await h.run(h.controller.spawn({ slot }))
    const other = createPtyController({ provider: h.provider, store })
    const adopted = await other.adoptSlot({ slot })
    expect(adopted?.materialized).toBe(true)
    expect(adopted?.result).toMatchObject({ id: created.id, incarnationId: created.incarnationId, isReattach: true })
    expect(other.hasPty(created.id)).toBe(true)
    expect(freshSpawns(h)).toBe(1)
    h.provider.emitExit(created.id, { exitCode: 0 })
    expect(await other.adoptSlot({ slot })).toBeNull()
    expect(freshSpawns(h)).toBe(1)
    await other.dispose()
  })

  it('adoptSlot reads the slot as a slot spawn does: a view that never learned the incarnation does not contradict one that did', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    const created = await h.run(h.controller.spawn({ slot }))
    expect(created.incarnationId).toBeDefined()
    // The live view lost the incarnation (e.g. a runtime that stores only id and host).
    store.setLiveOwner(slot, { ptyId: created.id, hostId: 'local' })
    const other = createPtyController({ provider: h.provider, store })
    const adopted = await other.adoptSlot({ slot })
    expect(adopted?.result).toMatchObject({ id: created.id, incarnationId: created.incarnationId, isReattach: true })
    expect(adopted?.owner).toEqual({ ptyId: created.id, hostId: 'local', incarnationId: created.incarnationId })
    const again = await h.run(h.controller.spawn({ slot }))
    expect(again).toMatchObject({ id: created.id, isReattach: true })
    expect(freshSpawns(h)).toBe(1)
    await other.dispose()
  })

  it('adoptSlot refuses a slot whose live and persisted owners disagree', async () => {
    const store = createInMemorySlotStore()
    const h = createHarness({ controller: { store } })
    store.setLiveOwner(slot, { ptyId: 'a', hostId: 'local' })
    store.setPersistedOwner(slot, { ptyId: 'b', hostId: 'local' })
    const error = await h.controller.adoptSlot({ slot }).catch((caught: unknown) => caught)
    expect(isPtySpawnError(error) && error.code).toBe('slot_owner_conflict')
  })
})

describe('slot turns under every interleaving', () => {
  it('concurrent spawns, adoptions and a claim of one slot create exactly one PTY, and everyone gets it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.constantFrom<'spawn' | 'adopt' | 'claim'>('spawn', 'spawn', 'adopt', 'claim'), { minLength: 2, maxLength: 6 }),
        async (s, callers) => {
          const fake = createFakePtyProvider({ scheduling: 'manual' })
          const provider: PtyProvider = {
            name: 'scheduled',
            authoritativeListings: true,
            spawn: (options) => s.schedule(fake.spawn(options), options.attachOnly === true ? 'attach reply' : 'spawn reply'),
            write: (id, data) => fake.write(id, data),
            resize: (id, cols, rows) => fake.resize(id, cols, rows),
            shutdown: (id, options) => fake.shutdown(id, options),
            listProcesses: () => fake.listProcesses(),
            onData: (listener) => fake.onData(listener),
            onExit: (listener) => fake.onExit(listener),
          }
          const controller = createPtyController({ provider, clock: createManualClock() })
          const outcomes = callers.map((kind) =>
            s.schedule(Promise.resolve(kind), `start ${kind}`).then(async () => {
              if (kind === 'spawn') return (await controller.spawn({ slot })).id
              if (kind === 'adopt') return (await controller.adoptSlot({ slot }))?.result.id ?? null
              const release = controller.claimSlotCreate(slot)
              try {
                const adopted = await controller.adoptSlot({ slot, slotCreateClaim: release })
                return adopted?.result.id ?? (await controller.spawn({ slot, slotCreateClaim: release })).id
              } finally {
                release()
              }
            }),
          )
          const ids = await s.waitFor(Promise.all(outcomes))
          const created = fake.calls.filter((call) => call.method === 'spawn' && (call.args[0] as { attachOnly?: boolean }).attachOnly !== true)
          const creators = callers.filter((kind) => kind !== 'adopt').length
          expect(created).toHaveLength(creators > 0 ? 1 : 0)
          const made = new Set(ids.filter((id): id is string => id !== null))
          expect(made.size).toBe(creators > 0 ? 1 : 0)
          // An adoption that ran before any create answers null; none ever adopts another PTY.
          ids.forEach((id, index) => {
            if (callers[index] !== 'adopt') expect(id).not.toBeNull()
          })
        },
      ),
      { numRuns: 60 },
    )
  })
})
