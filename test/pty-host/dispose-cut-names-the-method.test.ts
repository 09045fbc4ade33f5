/**
 * A request cut off by `dispose()` — sent, its answer not back when the dispose closes the
 * connection — is refused `provider_disposed` naming the public method the caller called and the
 * PTY it named, as a call after the dispose is, and as one cut off by `detach()` is. Before, it
 * named the wire's method ("The pty host provider was disposed before the host answered `list`"),
 * with no PTY: `list` for `listProcesses`, `exits` for `listExits`, `probe` for `probeLiveness`,
 * `cwd`, `clear`, `snapshot`… — names the caller never used.
 */
import { createPtyHostProvider, isPtyHostError, type PtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { recordUnhandledRejections } from '../support/unhandled-rejections.js'
import { answerAttach, fakeHostClosedAfter, okReplyFrame, useCleanups, type FakeAttachRequest } from './pty-host-test-support.js'

const cleanups = useCleanups()
const unhandled = recordUnhandledRejections()

/** An answer as data: the value, or the refusal's code, the method its message names, its PTY and message. */
async function settle(run: () => unknown): Promise<unknown> {
  try {
    return { value: await run() }
  } catch (error) {
    if (!isPtyHostError(error)) return { untyped: String(error) }
    return { code: error.code, method: /`(\w+)`/.exec(error.message)?.[1], ptyId: error.ptyId, message: error.message }
  }
}

/** The calls the host below leaves unanswered. */
function calls(app: PtyHostProvider): Record<string, () => unknown> {
  return {
    listProcesses: () => app.listProcesses(),
    listExits: () => app.listExits(),
    forgetExits: () => app.forgetExits([{ id: 'term-1' }]),
    clearBuffer: () => app.clearBuffer('term-1'),
    shutdown: () => app.shutdown('term-9'),
    probeLiveness: () => app.probeLiveness('term-1'),
    getCwd: () => app.getCwd('term-1'),
    getForegroundProcess: () => app.getForegroundProcess('term-1'),
    hasChildProcesses: () => app.hasChildProcesses('term-1'),
    getBufferSnapshot: () => app.getBufferSnapshot('term-1'),
  }
}

/**
 * A provider on a fake host that holds `term-1` live and answers its attach, and every stop but
 * one of `term-9` (the dispose's stops of what it spawned or attached are answered): nothing else.
 */
async function appHoldingTerm1(): Promise<PtyHostProvider> {
  const host = await fakeHostClosedAfter(
    cleanups,
    (message, socket) => {
      if (message.type !== 'request') return
      const params = message.params as { ptyId?: unknown }
      if (message.method === 'attach' && params.ptyId === 'term-1') answerAttach(socket, message as FakeAttachRequest, '')
      else if (message.method === 'shutdown' && params.ptyId !== 'term-9') socket.write(okReplyFrame(message.id, null))
    },
    { welcome: { methods: ['spawn', 'attach', 'write', 'resize', 'pause', 'resume', 'ack', 'shutdown', 'list', 'probe', 'cwd', 'foreground', 'children', 'clear', 'snapshot', 'exits', 'forgetExits'] } },
  )
  const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 30_000 })
  cleanups.push(() => app.dispose())
  await app.attach('term-1')
  return app
}

describe('a request cut off by dispose()', () => {
  it('is refused naming the public method and the PTY — worded as the same call after the dispose', async () => {
    const app = await appHoldingTerm1()
    const cut = Object.fromEntries(Object.entries(calls(app)).map(([method, call]) => [method, settle(call)]))
    // A spawn, a spawn of a session id (its attach goes first) and an attach, sent and not answered.
    cut.spawn = settle(() => app.spawn({ file: 'cat' }))
    cut.spawnOfSession = settle(() => app.spawn({ file: 'cat', sessionId: 'term-7' }))
    cut.attach = settle(() => app.attach('term-8'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    await app.dispose()
    const answers = Object.fromEntries(await Promise.all(Object.entries(cut).map(async ([method, answer]) => [method, await answer])))
    const ptyOf: Record<string, string | undefined> = { clearBuffer: 'term-1', shutdown: 'term-9', probeLiveness: 'term-1', getCwd: 'term-1', getForegroundProcess: 'term-1', hasChildProcesses: 'term-1', getBufferSnapshot: 'term-1', attach: 'term-8' }
    for (const [key, answer] of Object.entries(answers)) {
      const method = key === 'spawnOfSession' ? 'spawn' : key
      expect(answer, key).toMatchObject({ code: 'provider_disposed', method })
      // A spawn's refusal carries the id it minted (its process may exist); every other names the PTY the call named.
      if (key !== 'spawn') expect((answer as { ptyId?: unknown }).ptyId, `${key}'s ptyId`).toBe(ptyOf[key])
    }
    // Worded as the same call after the dispose (which refuseCallsAfterDispose answers).
    for (const [method, call] of Object.entries(calls(app))) {
      expect((answers[method] as { message: unknown }).message, method).toBe(((await settle(call)) as { message: unknown }).message)
    }
    expect(unhandled).toEqual([])
  }, 30_000)

  it('a spawn, a spawn of a session id and an attach asked once it began: refused naming the method (and the attach its PTY), as after it', async () => {
    const app = await appHoldingTerm1()
    const disposing = app.dispose()
    const asked = [settle(() => app.spawn({ file: 'cat' })), settle(() => app.spawn({ file: 'cat', sessionId: 'term-7' })), settle(() => app.attach('term-8'))]
    await disposing
    const [spawn, spawnOfSession, attach] = (await Promise.all(asked)) as { code?: unknown; method?: unknown; ptyId?: unknown; message?: unknown }[]
    // Before: "Cannot spawn: the pty host provider is being disposed", naming no method (nor PTY) as every other refusal does.
    expect(spawn).toEqual({ code: 'provider_disposed', method: 'spawn', ptyId: undefined, message: 'Cannot call `spawn`: the pty host provider is being disposed' })
    expect(spawnOfSession).toMatchObject({ code: 'provider_disposed', method: 'spawn', ptyId: undefined })
    expect(attach).toEqual({ code: 'provider_disposed', method: 'attach', ptyId: 'term-8', message: 'Cannot call `attach`: the pty host provider is being disposed' })
    expect(unhandled).toEqual([])
  }, 30_000)

  it('names what the same request cut off by detach() names (its refusals; a query cut off by a detach answers null)', async () => {
    const refusals = async (end: (app: PtyHostProvider) => Promise<void>): Promise<Record<string, unknown>> => {
      const app = await appHoldingTerm1()
      const cut = Object.entries(calls(app)).map(([method, call]) => [method, settle(call)] as const)
      await new Promise((resolve) => setTimeout(resolve, 50))
      await end(app)
      const named: Record<string, unknown> = {}
      for (const [method, answer] of cut) {
        const settled = (await answer) as { method?: unknown; ptyId?: unknown; value?: unknown }
        named[method] = 'value' in settled ? 'answered' : { method: settled.method, ptyId: settled.ptyId }
      }
      return named
    }
    const detached = await refusals((app) => app.detach())
    const disposed = await refusals((app) => app.dispose())
    for (const [method, named] of Object.entries(detached)) {
      if (named !== 'answered') expect(disposed[method], method).toEqual(named)
    }
    expect(Object.values(detached).filter((named) => named !== 'answered').length).toBe(5)
    expect(unhandled).toEqual([])
  }, 30_000)
})
