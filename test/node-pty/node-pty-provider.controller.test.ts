import { beforeAll, describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { isDead, killAndSpinUntilDead, liveChildrenOf, waitFor, expectNoChildLeftBehind, PtyEventLog } from './pty-test-support.js'

let provider: NodePtyProvider
let controller: PtyController
/** The provider's own events (what a provider attests on an exit, before the controller settles it). */
let providerLog: PtyEventLog
const exits: PtyControllerExitEvent[] = []
const output = new Map<string, string>()
/** Each PTY's output as it stood when its exit was emitted. */
const outputAtExit = new Map<string, string>()

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})

beforeAll(() => {
  provider = createNodePtyProvider()
  providerLog = new PtyEventLog(provider)
  controller = createPtyController({ provider })
  controller.on('exit', (event) => {
    outputAtExit.set(event.ptyId, output.get(event.ptyId) ?? '')
    exits.push(event)
  })
  controller.on('data', ({ ptyId, data }) => output.set(ptyId, (output.get(ptyId) ?? '') + data))
})


describe('node-pty provider under the controller', () => {
  it('stopAndWait stops a HUP-ignoring process within its deadline, as an operator close, with its child', async () => {
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; echo READY; sleep 30"] })
    await waitFor(() => ((output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
    const sleeper = await waitFor(() => liveChildrenOf(reply.pid!)[0], 'the sleep child')
    expect(await controller.stopAndWait(reply.id, { timeoutMs: 3_000 })).toBe(true)
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'operator_close' })
    expect(exit.incarnationId).toBe(reply.incarnationId)
    expect(isDead(reply.pid!)).toBe(true)
    expect(isDead(sleeper)).toBe(true)
  })

  it('passes a self-inflicted SIGKILL through as signaled(9), after all the output', async () => {
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', `head -c 50000 /dev/zero | tr '\\0' b; kill -9 $$`] })
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
    expect(outputAtExit.get(reply.id)).toBe('b'.repeat(50_000))
  })
})

// A process that died while its exit is still on its way to JavaScript (node-pty's waitpid thread
// has not handed it over, or its output is still draining) is dead: nothing may re-attach to it,
// call it live, or answer for it as if it ran. These tests kill the leader and spin, without
// yielding to the event loop, until the kernel shows it dead: its exit cannot have been delivered.

async function startReadyShell(options: Parameters<PtyController['spawn']>[0]) {
  const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; exec sleep 30'], ...options })
  await waitFor(() => ((output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
  return reply
}

describe('a leader that died before its exit was delivered', () => {
  it('is not re-attached to by a slot spawn: the slot gets a new process', async () => {
    const slot = { key: 'dead-owner-slot' }
    for (let round = 0; round < 5; round++) {
      const first = await startReadyShell({ slot })
      killAndSpinUntilDead(first.pid!)
      const second = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; exec sleep 30'], slot })
      expect(second.isReattach).not.toBe(true)
      expect(second.incarnationId).not.toBe(first.incarnationId)
      expect(second.pid).not.toBe(first.pid)
      expect(isDead(second.pid!)).toBe(false)
      const firstExit = await waitFor(() => exits.find((e) => e.ptyId === first.id && e.incarnationId === first.incarnationId), 'the first exit')
      expect(firstExit.cause).toEqual({ kind: 'signaled', signal: 9 })
      // The second process is the slot's owner, and stays live after the first one's exit.
      expect(controller.hasPty(second.id)).toBe(true)
      const again = await controller.spawn({ slot })
      expect(again).toMatchObject({ id: second.id, isReattach: true, incarnationId: second.incarnationId })
      expect(await controller.stopAndWait(second.id, { timeoutMs: 3_000 })).toBe(true)
    }
  })

  it('is not adopted by a claim spawn: the claim gets a new process', async () => {
    const claim = { key: 'dead-owner-claim' }
    for (let round = 0; round < 3; round++) {
      // A background child keeps the terminal open: the exit waits behind the output drain, so the
      // host's listing still holds the PTY while its leader is dead.
      const first = await controller.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30 & echo READY; exec sleep 30'], claim })
      await waitFor(() => ((output.get(first.id) ?? '').includes('READY') ? true : undefined), 'READY')
      killAndSpinUntilDead(first.pid!)
      const second = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo READY; exec sleep 30'], claim })
      expect(second.isReattach).not.toBe(true)
      expect(second.incarnationId).not.toBe(first.incarnationId)
      expect(isDead(second.pid!)).toBe(false)
      const firstExit = await waitFor(() => exits.find((e) => e.ptyId === first.id && e.incarnationId === first.incarnationId), 'the first exit')
      expect(firstExit.cause).toEqual({ kind: 'signaled', signal: 9 })
      expect(controller.hasPty(second.id)).toBe(true)
      expect(await controller.stopAndWait(second.id, { timeoutMs: 3_000 })).toBe(true)
    }
  })

  it('is not live to hasPty, and its id is refused for a new session with a message saying it ended', async () => {
    const reply = await startReadyShell({ sessionId: 'dead-leader-id' })
    killAndSpinUntilDead(reply.pid!)
    expect(provider.hasPty(reply.id)).toBe(false)
    expect(await provider.probeLiveness(reply.id)).toBe(false)
    await expect(provider.spawn({ sessionId: reply.id, isNewSession: true, file: '/bin/true' })).rejects.toMatchObject({
      code: 'pty_id_in_use',
      message: expect.stringMatching(/has exited; its exit is still being delivered/),
    })
    await expect(provider.spawn({ sessionId: reply.id, attachOnly: true })).rejects.toMatchObject({
      code: 'pty_absent',
      message: expect.stringMatching(/has exited/),
    })
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
  })
})

// A host may stop a PTY on the provider itself — its `shutdown`, or disposing the provider before
// the controller. The controller did not ask, so only the provider can say the stop came first
// (`stopRequestedBeforeDeath`); before, such a stop read as `signaled(1)`, a death nobody asked for.
describe('node-pty provider: a stop requested on the provider directly', () => {
  it('is an operator close through the controller, and the provider attests the order on its exit', async () => {
    const reply = await startReadyShell({})
    await provider.shutdown(reply.id, { timeoutMs: 3_000 })
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'operator_close' })
    const attested = providerLog.exits(reply.id)[0]
    expect(attested).toMatchObject({ stopRequestedBeforeDeath: true, cause: { kind: 'signaled', signal: 1 } })
    expect(attested?.diedBeforeStopRequest).toBeUndefined()
  })

  it('keeps the real cause of a leader killed from outside before the stop reached the provider', async () => {
    const reply = await startReadyShell({})
    // Dead in the kernel, its exit not delivered yet (no turn of the event loop in between).
    killAndSpinUntilDead(reply.pid!)
    const stopping = provider.shutdown(reply.id, { timeoutMs: 3_000 })
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    await stopping
    expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
    const attested = providerLog.exits(reply.id)[0]
    expect(attested).toMatchObject({ diedBeforeStopRequest: true })
    expect(attested?.stopRequestedBeforeDeath).toBeUndefined()
  })

  it("a provider disposed before its controller: each live PTY's exit is an operator close", async () => {
    const ownProvider = createNodePtyProvider()
    const own = createPtyController({ provider: ownProvider })
    const ownExits: PtyControllerExitEvent[] = []
    own.on('exit', (event) => ownExits.push(event))
    try {
      const replies = await Promise.all([0, 1, 2].map(() => own.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })))
      await ownProvider.dispose()
      await waitFor(() => (ownExits.length === replies.length ? true : undefined), 'the three exits')
      expect(ownExits.map((e) => e.cause)).toEqual(replies.map(() => ({ kind: 'operator_close' })))
      for (const reply of replies) expect(isDead(reply.pid!)).toBe(true)
    } finally {
      await own.dispose()
    }
  })
})

// A SIGKILL from outside (`kill -9`, the OOM killer) that lands while a stop is under way — its
// hang-up sent, its own SIGKILL not yet — is not the stop's doing: SIGKILL cannot be caught, nor
// what the hang-up sets off (SIGPIPE, a handler's SIGABRT). The SSH provider already kept such a death `signaled(9)`;
// node-pty (and the pty host, which runs it) published `operator_close`, so the same death read
// as a tab close on a local host and as a kill over SSH (found by the cross-provider matrix).
describe('node-pty provider: an outside SIGKILL while a stop is under way', () => {
  /** A shell that says when the stop's hang-up reached it, ignores TERM, and runs until killed. */
  const HANGUP_REPORTING_SHELL = ['-c', "trap 'echo GOT-HUP' HUP; trap '' TERM; echo READY; while :; do sleep 0.05; done"]

  it('keeps signaled(9) when the stop had sent only its hang-up; the stop is still verified', async () => {
    // Long graces: the stop's own SIGKILL is 20 s away, far past the outside one.
    const ownProvider = createNodePtyProvider({ hangupGraceMs: 10_000, terminateGraceMs: 10_000 })
    const ownLog = new PtyEventLog(ownProvider)
    const own = createPtyController({ provider: ownProvider })
    const ownExits: PtyControllerExitEvent[] = []
    let ownOutput = ''
    own.on('exit', (event) => ownExits.push(event))
    own.on('data', ({ data }) => (ownOutput += data))
    try {
      const reply = await own.spawn({ file: '/bin/sh', args: HANGUP_REPORTING_SHELL })
      await waitFor(() => (ownOutput.includes('READY') ? true : undefined), 'READY')
      const stopped = own.stopAndWait(reply.id, { timeoutMs: 30_000 })
      await waitFor(() => (ownOutput.includes('GOT-HUP') ? true : undefined), 'the stop’s hang-up to reach the shell')
      process.kill(reply.pid!, 'SIGKILL')
      expect(await stopped).toBe(true)
      const exit = await waitFor(() => ownExits.find((e) => e.ptyId === reply.id), 'the exit')
      expect(exit.cause).toEqual({ kind: 'signaled', signal: 9 })
      expect(ownLog.exits(reply.id)[0]).toMatchObject({ cause: { kind: 'signaled', signal: 9 }, diedBeforeStopRequest: true })
      expect(ownLog.exits(reply.id)[0]?.stopRequestedBeforeDeath).toBeUndefined()
    } finally {
      await own.dispose()
      await ownProvider.dispose()
    }
  })

  it('a death by the stop’s own SIGKILL stays an operator close', async () => {
    const reply = await controller.spawn({ file: '/bin/sh', args: HANGUP_REPORTING_SHELL })
    await waitFor(() => ((output.get(reply.id) ?? '').includes('READY') ? true : undefined), 'READY')
    // Graces of 0: HUP, TERM and KILL at once; the shell survives the first two.
    await provider.shutdown(reply.id, { immediate: true, timeoutMs: 5_000 })
    const exit = await waitFor(() => exits.find((e) => e.ptyId === reply.id), 'the exit')
    expect(exit.cause).toEqual({ kind: 'operator_close' })
    expect(providerLog.exits(reply.id)[0]).toMatchObject({ cause: { kind: 'signaled', signal: 9 }, stopRequestedBeforeDeath: true })
  })
})
