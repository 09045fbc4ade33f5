import { createPtyHostProvider } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { fakeHostClosedAfter, okReplyFrame, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> =>
  Promise.race([promise, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms))])

describe('how long detach() waits', () => {
  // TSDoc of detach: the requests already sent "finish first (within the request timeout)". A spawn
  // whose onPtySpawnCommitted throws is tracked to its end, and its end is a stop sent without any
  // timeout: a host that answers the spawn but never that stop holds the detach open for ever.
  it('resolves within the request timeout when a spawn in flight has a commit hook that throws and the host never answers the stop', async () => {
    const asked: string[] = []
    const host = await fakeHostClosedAfter(cleanups, (message, socket) => {
      if (message.type !== 'request') return
      asked.push(String(message.method))
      if (message.method === 'spawn') socket.write(okReplyFrame(message.id, { pid: 4242, incarnationId: 'inc-1' }))
      // `shutdown`: never answered (a host stuck on the stop).
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 300 })
    await app.listProcesses().catch(() => undefined) // connected: the spawn below is sent in this turn
    const spawning = app.spawn({
      file: 'cat',
      onPtySpawnCommitted: () => {
        throw new Error('the app no longer wants it')
      },
    })
    const spawnOutcome = spawning.then(
      () => 'resolved',
      (error: Error) => error.message,
    )
    const detaching = app.detach()
    const [spawnEnd, detachEnd] = await Promise.all([within(spawnOutcome, 2_000), within(detaching.then(() => 'detached'), 2_000)])
    expect(asked).toEqual(['list', 'spawn', 'shutdown'])
    // The spawn fails with what its hook threw, and the detach is done: neither waits for ever.
    expect({ spawnEnd, detachEnd }).toEqual({ spawnEnd: 'the app no longer wants it', detachEnd: 'detached' })
  }, 10_000)

  // Fine: a spawn the host never answers holds the detach for the request timeout only, and its stop
  // (the orphan's) is written before the connection closes.
  it('control: a spawn never answered holds the detach for the request timeout, and its stop goes out first', async () => {
    const asked: string[] = []
    const host = await fakeHostClosedAfter(cleanups, (message) => {
      if (message.type === 'request') asked.push(String(message.method))
    })
    const app = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 300 })
    await app.listProcesses().catch(() => undefined)
    const spawning = app.spawn({ file: 'cat' }).catch((error: { code?: string; processMayExist?: boolean }) => ({ code: error.code, processMayExist: error.processMayExist }))
    const started = Date.now()
    expect(await within(app.detach().then(() => 'detached'), 2_000)).toBe('detached')
    expect(Date.now() - started).toBeLessThan(1_500)
    expect(await spawning).toEqual({ code: 'transport_lost', processMayExist: true })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(asked).toEqual(['list', 'spawn', 'shutdown'])
  }, 10_000)
})
