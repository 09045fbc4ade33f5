/**
 * The node-pty provider's public methods called late, as an app's async callbacks call them, on
 * 200 real PTYs of one provider: (a) from inside each PTY's exit listener and from a timer right
 * after it, (b) from a timer after `dispose()` resolved (and, before that, while it runs: from the
 * disposal's exit listeners and a timer), (c) about a previous incarnation of an id that was
 * spawned again. Each answers as documented (`PtyProvider` in src/contracts/provider.ts,
 * docs/node-pty-provider.md): an ended PTY's answers (`refused('pty_exited')`, `false`, `null`, a
 * stop that resolves, a no-op), a previous incarnation's (`false` proven gone, a stop that touches
 * nothing), and after the dispose a `provider_disposed` refusal naming the method and carrying the
 * id — never an untyped throw, an unhandled rejection, a descriptor or a process left behind.
 */
import { readdirSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createNodePtyProvider, isNodePtyProviderError, type NodePtyProvider } from 'ptykit/node-pty'
import type { PtyExitEvent } from 'ptykit/contracts'
import { expectNoChildLeftBehind, isDead, processIdentity, waitFor } from './pty-test-support.js'

/** PTYs on the one provider: the scale users run (200–300). */
const PTYS = 200

/** A scale test's own time limit: 200 forks, twice, on a loaded 2-core machine. */
const SCALE_TEST_TIMEOUT_MS = 120_000

let provider: NodePtyProvider | undefined

expectNoChildLeftBehind(async () => {
  await provider?.dispose()
})

/** How many providers the process-wide exit guard holds now (as idle-provider-not-retained.test.ts reads it). */
function guarded(): number {
  const registry = (globalThis as Record<symbol, { killers: Set<unknown> } | undefined>)[Symbol.for('ptykit.processExitGuard.v1')]
  return registry?.killers.size ?? 0
}

/** How many descriptors this process has open. */
function openFds(): number {
  return readdirSync('/proc/self/fd').length
}

/** One call's outcome: its answer, or what it threw or rejected with (summarised). */
type Outcome = { answer: unknown } | { error: { typed: boolean; code: unknown; name: string; message: string; ptyId: unknown } }

function describeError(error: unknown): Outcome {
  const e = error as { code?: unknown; name?: unknown; message?: unknown; ptyId?: unknown }
  return {
    error: {
      typed: isNodePtyProviderError(error),
      code: e?.code,
      name: String(e?.name),
      message: String(e?.message),
      ptyId: e?.ptyId,
    },
  }
}

/** Every public per-PTY method (and the listing and capability), by name, called about `id`. */
function everyCall(p: NodePtyProvider, id: string, incarnationId: string | undefined): Record<string, () => unknown> {
  return {
    write: () => p.write(id, 'late\r'),
    writeBytes: () => p.writeBytes!(id, new Uint8Array([0x6c, 0x0d])),
    resize: () => p.resize(id, 100, 30),
    getSize: () => p.getSize!(id),
    pauseProducer: () => p.pauseProducer!(id),
    resumeProducer: () => p.resumeProducer!(id),
    shutdown: () => p.shutdown(id, incarnationId === undefined ? {} : { expectedIncarnationId: incarnationId as never }),
    shutdownImmediate: () => p.shutdown(id, incarnationId === undefined ? { immediate: true } : { immediate: true, expectedIncarnationId: incarnationId as never }),
    // Membership only: 200 listings of 200 PTYs, each reading every one's cwd and title, would be the test's whole cost.
    listProcesses: () => p.listProcesses({ membershipOnly: true }).then((rows) => rows.some((row) => row.id === id && row.incarnationId === incarnationId)),
    hasPty: () => p.hasPty!(id),
    probeLiveness: () => p.probeLiveness!(id, incarnationId === undefined ? {} : { incarnationId: incarnationId as never }),
    getCwd: () => p.getCwd!(id),
    getCwdLeader: () => p.getCwd!(id, { of: 'leader' }),
    getForegroundProcess: () => p.getForegroundProcess!(id),
    hasChildProcesses: () => p.hasChildProcesses!(id),
    confirmForeground: () => p.confirmForeground!(id),
    supportsForegroundProcessEvidence: () => p.supportsForegroundProcessEvidence!(),
    getPid: () => p.getPid(id),
  }
}

/** Make every call now (synchronously, in order); the outcomes once the promises settled. */
function callEvery(p: NodePtyProvider, id: string, incarnationId: string | undefined): Promise<Record<string, Outcome>> {
  const settled: Array<Promise<[string, Outcome]>> = []
  for (const [name, call] of Object.entries(everyCall(p, id, incarnationId))) {
    try {
      const answer = call()
      settled.push(
        answer instanceof Promise
          ? answer.then(
              (value): [string, Outcome] => [name, { answer: value }],
              (error: unknown): [string, Outcome] => [name, describeError(error)],
            )
          : Promise.resolve([name, { answer }]),
      )
    } catch (error) {
      settled.push(Promise.resolve([name, describeError(error)]))
    }
  }
  return Promise.all(settled).then((entries) => Object.fromEntries(entries))
}

/** What an ended PTY's id answers (no newer incarnation under it). */
const ENDED_ANSWERS = {
  write: { answer: { kind: 'refused', reason: 'pty_exited' } },
  writeBytes: { answer: { kind: 'refused', reason: 'pty_exited' } },
  resize: { answer: false },
  getSize: { answer: null },
  pauseProducer: { answer: undefined },
  resumeProducer: { answer: undefined },
  shutdown: { answer: undefined },
  shutdownImmediate: { answer: undefined },
  listProcesses: { answer: false },
  hasPty: { answer: false },
  probeLiveness: { answer: false },
  getCwd: { answer: null },
  getCwdLeader: { answer: null },
  getForegroundProcess: { answer: null },
  hasChildProcesses: { answer: null },
  confirmForeground: { answer: null },
  supportsForegroundProcessEvidence: { answer: true },
  getPid: { answer: null },
}

describe('node-pty provider: late calls from async callbacks, at scale', () => {
  it(
    `${PTYS} PTYs: every method called from the exit listener, after the exit, about a previous incarnation and after dispose answers as documented, leaving no descriptor or process`,
    async () => {
      // node-pty loaded once before counting: its module is no leak.
      const warm = createNodePtyProvider()
      await warm.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
      await warm.dispose()
      const fdsBefore = openFds()
      const guardedBefore = guarded()
      const unhandled: unknown[] = []
      const onUnhandled = (reason: unknown): void => {
        unhandled.push(reason)
      }
      process.on('unhandledRejection', onUnhandled)
      try {
        const live = (provider = createNodePtyProvider())
        const ids = Array.from({ length: PTYS }, (_, i) => `late-${i}`)
        const first = new Map<string, { incarnationId: string; pid: number }>()
        const inListener = new Map<string, Promise<Record<string, Outcome>>>()
        const afterExit = new Map<string, Promise<Record<string, Outcome>>>()
        const exits: PtyExitEvent[] = []
        live.onExit((event) => {
          exits.push(event)
          if (first.get(event.id)?.incarnationId !== event.incarnationId) return
          // (a) from inside the exit listener, and from a timer right after it.
          inListener.set(event.id, callEvery(live, event.id, undefined))
          setTimeout(() => afterExit.set(event.id, callEvery(live, event.id, undefined)), 0)
        })
        const spawned = await Promise.all(ids.map((id) => live.spawn({ sessionId: id, isNewSession: true, file: '/bin/sh', args: ['-c', 'read line; exit 3'] })))
        for (const result of spawned) first.set(result.id, { incarnationId: result.incarnationId as string, pid: result.pid as number })
        for (const id of ids) expect(live.write(id, 'go\r')).toBeTruthy()
        await waitFor(() => (afterExit.size === PTYS ? true : undefined), `${PTYS} exits`, 60_000)
        expect(Object.fromEntries(exits.map((event) => [event.id, event.cause]))).toEqual(Object.fromEntries(ids.map((id) => [id, { kind: 'exited', exitCode: 3 }])))
        for (const id of ids) {
          expect({ id, ...(await inListener.get(id)) }).toEqual({ id, ...ENDED_ANSWERS })
          expect({ id, ...(await afterExit.get(id)) }).toEqual({ id, ...ENDED_ANSWERS })
        }
        // An attach to an ended one (by id, and by its incarnation) is a typed absence naming it; nothing starts.
        await Promise.all(
          ids.flatMap((id) =>
            [undefined, first.get(id)!.incarnationId].map((expected) =>
              expect(live.spawn({ sessionId: id, attachOnly: true, ...(expected === undefined ? {} : { expectedIncarnationId: expected as never }) })).rejects.toSatisfy(
                (error) => isNodePtyProviderError(error) && error.code === 'pty_absent' && error.ptyId === id,
              ),
            ),
          ),
        )
        for (const id of ids) expect(live.hasPty!(id)).toBe(false)
        // Every exit delivered and every call answered: the provider is off the process's exit guard.
        expect(guarded()).toBe(guardedBefore)

        // (c) the ids spawned again: a call about the previous incarnation answers about it alone.
        const second = await Promise.all(ids.map((id) => live.spawn({ sessionId: id, isNewSession: true, file: '/bin/sh', args: ['-c', 'exec sleep 600'] })))
        const secondIdentities = second.map((result) => processIdentity(result.pid as number))
        await Promise.all(ids.map(async (id, i) => {
          const previous = first.get(id)!.incarnationId
          const outcomes = await callEvery(live, id, previous)
          expect({ id, shutdown: outcomes.shutdown, probeLiveness: outcomes.probeLiveness, listProcesses: outcomes.listProcesses }).toEqual({
            id,
            shutdown: { answer: undefined },
            probeLiveness: { answer: false },
            listProcesses: { answer: false },
          })
          // An attach that expects the previous one is refused, naming both incarnations.
          await expect(live.spawn({ sessionId: id, attachOnly: true, expectedIncarnationId: previous as never })).rejects.toSatisfy(
            (error) =>
              isNodePtyProviderError(error) &&
              error.code === 'pty_live_other_incarnation' &&
              error.ptyId === id &&
              error.expectedIncarnationId === previous &&
              error.liveIncarnationId === second[i]!.incarnationId,
          )
          // The stop of the previous one touched nothing: the current one runs (the rest of the
          // calls, made without an incarnation, were about it: each answered).
          expect(live.hasPty!(id)).toBe(true)
          expect(isDead(second[i]!.pid as number)).toBe(false)
          for (const outcome of Object.values(outcomes)) expect(outcome).not.toHaveProperty('error')
        }))

        // While the dispose runs: from the second incarnations' exit listeners (the disposal's
        // exits) and from a timer: each call answers or is refused provider_disposed, typed.
        const duringDispose: Array<Promise<Record<string, Outcome>>> = []
        live.onExit((event) => {
          if (first.get(event.id)?.incarnationId !== event.incarnationId) duringDispose.push(callEvery(live, event.id, event.incarnationId))
        })
        // Input the programs never read (more than a terminal's buffer holds): held by the provider
        // when the dispose starts; each write settles, none waits for good.
        const held = ids.map((id) => Promise.resolve(live.write(id, 'x'.repeat(100_000))))
        const disposed = live.dispose()
        setTimeout(() => {
          for (const id of ids) duringDispose.push(callEvery(live, id, undefined))
        }, 0)
        await disposed
        for (const outcomes of await Promise.all(duringDispose)) {
          for (const [method, outcome] of Object.entries(outcomes)) {
            if (!('error' in outcome)) continue
            // A stop the call joined may outlast its own deadline on a loaded machine (each ended by the
            // dispose's KILL all the same, checked below): typed, naming the PTY, as documented.
            const codes = method.startsWith('shutdown') ? ['provider_disposed', 'shutdown_timeout'] : ['provider_disposed']
            expect({ method, typed: outcome.error.typed, known: codes.includes(outcome.error.code as string) }).toEqual({ method, typed: true, known: true })
            if (outcome.error.code === 'shutdown_timeout') expect(outcome.error.message).toContain(`"${String(outcome.error.ptyId)}"`)
          }
        }
        for (const settlement of await Promise.all(held)) expect(['accepted', 'refused', 'unverifiable']).toContain(settlement.kind)

        // (b) from a timer after dispose() resolved: every call refused provider_disposed, naming the method and the id.
        const afterDispose = await new Promise<Array<[string, Record<string, Outcome>]>>((resolve) =>
          setTimeout(() => {
            const calls = ids.flatMap((id, i) =>
              [undefined, first.get(id)!.incarnationId, second[i]!.incarnationId as string].map((incarnationId) =>
                callEvery(live, id, incarnationId).then((outcomes): [string, Record<string, Outcome>] => [id, outcomes]),
              ),
            )
            resolve(Promise.all(calls))
          }, 0),
        )
        expect(afterDispose).toHaveLength(PTYS * 3)
        for (const [id, outcomes] of afterDispose) {
          for (const [method, outcome] of Object.entries(outcomes)) {
            const name = method.replace(/Immediate$|Leader$/, '')
            expect({ id, method, outcome }).toEqual({
              id,
              method,
              outcome: {
                error: {
                  typed: true,
                  code: 'provider_disposed',
                  name: 'NodePtyProviderError',
                  message: expect.stringContaining(`\`${name}\``),
                  ptyId: name === 'listProcesses' || name === 'supportsForegroundProcessEvidence' ? undefined : id,
                },
              },
            })
          }
        }
        // Each second incarnation's process is gone (the first ones' exits proved theirs): dead, or its
        // pid now another process's (a busy machine reuses pids).
        for (const [i, result] of second.entries()) {
          const now = processIdentity(result.pid as number)
          expect({ pid: result.pid, gone: now === null || now.startTime !== secondIdentities[i]?.startTime || isDead(result.pid as number) }).toEqual({ pid: result.pid, gone: true })
        }
        await waitFor(() => (openFds() <= fdsBefore ? true : undefined), 'the descriptors closed', 5_000).catch(() => undefined)
        expect(openFds()).toBe(fdsBefore)
        expect(guarded()).toBe(guardedBefore)
        await sleep(0)
        expect(unhandled).toEqual([])
      } finally {
        process.off('unhandledRejection', onUnhandled)
      }
    },
    SCALE_TEST_TIMEOUT_MS,
  )
})
