/**
 * The pty host provider disposed before (or while) the controller that uses it is still live —
 * `provider.dispose()` with stops under way. A request in flight when the dispose closes the
 * connection (a stop step's shutdown, the listing that verifies a stop, a probe) is rejected
 * `provider_disposed`, as a call after the dispose is. Before, it was rejected `transport_lost`:
 * the controller read a verifying listing's failure as `listing_failed` (a few per dispose), and a
 * stop whose last check met it answered `false` although the provider had reported the PTY's exit
 * (an operator close). The same sequences over SSH: test/ssh/provider-disposed-before-controller.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerError } from 'ptykit/controller'
import { createPtyHostProvider } from 'ptykit/pty-host'
import { waitFor } from '../node-pty/pty-test-support.js'
import { answerAttach, fakeHostClosedAfter, hostFixture, isAlive, okReplyFrame, providerOn, useCleanups, type FakeAttachRequest } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** PTYs at once (the audit had 19). */
const PTYS = 20

async function spawned() {
  const { socketPath } = hostFixture(cleanups)
  const provider = providerOn(socketPath)
  const controller = createPtyController({ provider })
  cleanups.push(
    () => provider.dispose(),
    () => controller.dispose(),
  )
  const errors: PtyControllerError[] = []
  const causes: string[] = []
  controller.on('error', (error) => errors.push(error))
  controller.on('exit', (event) => causes.push(event.cause.kind))
  const pids: number[] = []
  const ids: string[] = []
  for (let index = 0; index < PTYS; index++) {
    // A program that ignores the hang-up: the stop is still under way (hang-up, then kill) when the provider is disposed.
    const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', "trap '' HUP; while :; do sleep 0.2; done"] })
    ids.push(reply.id)
    if (reply.pid !== null && reply.pid !== undefined) pids.push(reply.pid)
  }
  return { provider, controller, ids, pids, errors, causes }
}

describe('the pty host provider disposed before the controller', () => {
  it('stops under way when the provider is disposed answer true, with no listing_failed', async () => {
    const { provider, controller, ids, pids, errors, causes } = await spawned()
    const stops = ids.map((id) => controller.stopAndWait(id, { timeoutMs: 10_000 }))
    // Some stops are past their hang-up, verifying, when the dispose closes the connection.
    await new Promise((resolve) => setTimeout(resolve, 50))
    await provider.dispose()
    expect(await Promise.all(stops)).toEqual(ids.map(() => true))
    await controller.dispose()
    expect(causes).toEqual(ids.map(() => 'operator_close'))
    expect(errors.map((error) => [error.code, error.message])).toEqual([])
    await waitFor(() => (pids.every((pid) => !isAlive(pid)) ? true : undefined), 'the programs to be gone')
  }, 60_000)
})

describe('requests in flight when the pty host provider is disposed', () => {
  it('are refused provider_disposed, naming the method called (not the wire\'s request); a spawn in flight still says its process may exist', async () => {
    // A host that answers only stops: every other request is still in flight when the dispose closes the connection.
    const host = await fakeHostClosedAfter(cleanups, (message, socket) => {
      if (message.type === 'request' && message.method === 'shutdown') socket.write(okReplyFrame(message.id, null))
    })
    const provider = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 30_000 })
    cleanups.push(() => provider.dispose())
    const outcome = (promise: Promise<unknown>) =>
      promise.then(
        (value) => ({ resolved: value }),
        (error: { code?: unknown; message?: unknown; processMayExist?: unknown }) => ({ code: error.code, message: error.message, processMayExist: error.processMayExist }),
      )
    const listing = outcome(provider.listProcesses())
    // Connected (the listing opened the connection): the calls below are sent at once.
    await waitFor(() => (provider.connected ? true : undefined), 'the connection')
    const spawning = outcome(provider.spawn({ file: 'cat' }))
    const probing = outcome(provider.probeLiveness('term-1'))
    const cwd = outcome(provider.getCwd('term-1'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    await provider.dispose()
    expect(await listing).toEqual({ code: 'provider_disposed', message: expect.stringContaining('`listProcesses`'), processMayExist: false })
    expect(await probing).toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`probeLiveness`') })
    expect(await cwd).toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`getCwd`') })
    // The host may have started it: never "not started".
    expect(await spawning).toMatchObject({ code: 'provider_disposed', processMayExist: true })
  }, 20_000)

  // Found in review (helper-213): `clearBuffer` swallowed every failure, the dispose's refusal too —
  // so a clear the dispose cut off resolved as if done, where every other request (a probe, a
  // query) is refused `provider_disposed`, as `PtyProvider.dispose` says.
  it('a clear of a live PTY the dispose cut off is refused provider_disposed, as the queries are', async () => {
    // A host that holds one live session (attach), answers stops, and never answers a clear.
    const host = await fakeHostClosedAfter(cleanups, (message, socket) => {
      if (message.type !== 'request') return
      if (message.method === 'attach') answerAttach(socket, message as FakeAttachRequest, '')
      else if (message.method === 'shutdown') socket.write(okReplyFrame(message.id, null))
    })
    const provider = createPtyHostProvider({ socketPath: host.socketPath, autoStart: false, requestTimeoutMs: 30_000 })
    cleanups.push(() => provider.dispose())
    await provider.attach('term-1')
    const clearing = provider.clearBuffer('term-1').then(
      () => 'resolved',
      (error: { code?: unknown; message?: unknown }) => ({ code: error.code, message: error.message }),
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    await provider.dispose()
    expect(await clearing).toMatchObject({ code: 'provider_disposed', message: expect.stringContaining('`clearBuffer`') })
  }, 20_000)
})
