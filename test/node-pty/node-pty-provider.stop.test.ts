import { beforeAll, describe, expect, it } from 'vitest'
import { createNodePtyProvider, isNodePtyProviderError, type NodePtyProvider } from 'ptykit/node-pty'
import { PtyEventLog, isDead, liveChildrenOf, procRow, waitFor, expectNoChildLeftBehind } from './pty-test-support.js'

let provider: NodePtyProvider
let log: PtyEventLog

expectNoChildLeftBehind(async () => {
  await provider.dispose()
})

beforeAll(() => {
  provider = createNodePtyProvider()
  log = new PtyEventLog(provider)
})


const HUP_IGNORING = { file: '/bin/sh', args: ['-c', "trap '' HUP; sleep 30"] }

/** Spawn an interactive `sh` whose startup command starts a background job; return the job's pid. */
async function shellWithBackgroundJob(job: string): Promise<{ id: string; leader: number; job: number }> {
  const result = await provider.spawn({ file: '/bin/sh', args: ['-i'], command: `${job} & echo BG=$!` })
  const job_ = await waitFor(() => {
    const match = /BG=(\d+)/.exec(log.output(result.id))
    return match === null ? undefined : Number(match[1])
  }, 'the background job’s pid')
  return { id: result.id, leader: result.pid!, job: job_ }
}

describe('node-pty provider: stopping (real processes)', () => {
  it('stops a HUP-ignoring process within its deadline: SIGTERM after the hang-up grace', async () => {
    const result = await provider.spawn(HUP_IGNORING)
    const sleeper = await waitFor(() => liveChildrenOf(result.pid!)[0], 'the sleep child')
    await provider.shutdown(result.id, { timeoutMs: 10_000 })
    expect((await log.exitOf(result.id)).cause).toEqual({ kind: 'signaled', signal: 15 })
    expect(isDead(result.pid!)).toBe(true)
    expect(isDead(sleeper)).toBe(true)
  })

  it('`immediate` goes straight to SIGKILL', async () => {
    const result = await provider.spawn(HUP_IGNORING)
    await provider.shutdown(result.id, { immediate: true })
    expect((await log.exitOf(result.id)).cause).toEqual({ kind: 'signaled', signal: 9 })
  })

  it('an immediate stop during a graceful one escalates it to SIGKILL; both resolve', async () => {
    const result = await provider.spawn(HUP_IGNORING)
    await waitFor(() => liveChildrenOf(result.pid!)[0], 'the sleep child')
    const graceful = provider.shutdown(result.id)
    const immediate = provider.shutdown(result.id, { immediate: true })
    await Promise.all([graceful, immediate])
    expect((await log.exitOf(result.id)).cause).toEqual({ kind: 'signaled', signal: 9 })
  })

  it('a background job of an interactive shell (its own process group) dies with the shell', async () => {
    const { id, leader, job } = await shellWithBackgroundJob('sleep 30')
    const row = procRow(job)
    // The point of the test: job control gave the job a group of its own, in the shell's session.
    expect(row?.pgid).toBe(job)
    expect(row?.sid).toBe(leader)
    await provider.shutdown(id)
    expect((await log.exitOf(id)).cause).toEqual({ kind: 'signaled', signal: 1 })
    expect(isDead(job)).toBe(true)
  })

  it('a HUP-ignoring background job dies too (the session is escalated, not only the leader)', async () => {
    const { id, job } = await shellWithBackgroundJob("(trap '' HUP; exec sleep 30)")
    await provider.shutdown(id, { timeoutMs: 3_000 })
    expect(isDead(job)).toBe(true)
  })

  it('a wrong expectedIncarnationId leaves the process alone', async () => {
    const result = await provider.spawn({ file: 'cat' })
    await provider.shutdown(result.id, { expectedIncarnationId: 'someone-else' as never, immediate: true })
    expect(isDead(result.pid!)).toBe(false)
    expect(await provider.probeLiveness(result.id)).toBe(true)
    await provider.shutdown(result.id, { expectedIncarnationId: result.incarnationId!, immediate: true })
    expect((await log.exitOf(result.id)).incarnationId).toBe(result.incarnationId)
    expect(isDead(result.pid!)).toBe(true)
  })

  it('shutting down an unknown or already exited PTY resolves at once', async () => {
    await expect(provider.shutdown('no-such-pty')).resolves.toBeUndefined()
    const result = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    await log.exitOf(result.id)
    await expect(provider.shutdown(result.id)).resolves.toBeUndefined()
  })

  it('a stop finds a paused PTY’s exit anyway (the owed tail is released)', async () => {
    const result = await provider.spawn({ file: 'cat' })
    provider.pauseProducer(result.id)
    await provider.shutdown(result.id, { timeoutMs: 3_000 })
    expect((await log.exitOf(result.id)).cause).toEqual({ kind: 'signaled', signal: 1 })
  })

  it('dispose stops every PTY (HUP-ignoring ones too), then refuses new spawns', async () => {
    const own = createNodePtyProvider()
    const ownLog = new PtyEventLog(own)
    const a = await own.spawn({ file: 'cat' })
    const b = await own.spawn(HUP_IGNORING)
    // Only once its child runs is the trap certainly set: before, a HUP would simply kill it.
    await waitFor(() => liveChildrenOf(b.pid!)[0], 'the sleep child')
    await own.dispose()
    expect(ownLog.exits(b.id)[0]?.cause).toEqual({ kind: 'signaled', signal: 15 })
    expect(ownLog.exits(a.id)).toHaveLength(1)
    expect(ownLog.exits(b.id)).toHaveLength(1)
    expect(isDead(a.pid!) && isDead(b.pid!)).toBe(true)
    // A disposed provider no longer answers (the rule of every bundled provider): refused, never `[]`.
    await expect(own.listProcesses()).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`listProcesses`') })
    const error = await own.spawn({ file: 'cat' }).catch((e: unknown) => e)
    expect(isNodePtyProviderError(error) && error.code).toBe('provider_disposed')
    await expect(own.dispose()).resolves.toBeUndefined()
  })
})
