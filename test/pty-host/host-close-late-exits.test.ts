/**
 * A pty host closed while its sessions are slow to die. Since 7 Dec the node-pty provider's
 * `dispose()` keeps reporting, for up to 30 s after it resolved, the exits of the sessions it
 * signalled whose exit had not come by its deadline — and the host runs its sessions through that
 * provider, so such an exit now reaches the host's exit handler while (or after) the host closes.
 *
 * Made deterministic as in the node-pty test (exit-after-dispose-deadline.test.ts): the provider's
 * `shutdownDeadlineMs: 0` makes its disposal give up before its SIGKILL of a program that ignores
 * HUP and TERM has even gone out, so the exit always comes after the disposal resolved.
 *
 * Found: the late exit, heard while the close waited for its connections to drain, was written to a
 * connection the close had already ended (`ERR_STREAM_WRITE_AFTER_END`, which destroyed it and cut
 * off what the close was still flushing to that client). Checked too: no throw, no unhandled
 * rejection, nothing written to the journal after the close, and a successor host answers for the
 * session truthfully: proven ended — and, since the close kills what its stops left and keeps the
 * journal open until their exits are in (bounded), with the exit the closing host heard (before,
 * that exit came after the journal closed, and the successor listed no exit for it: its check
 * filtered the exits by `id`, a field an exit message does not have — it could not fail).
 */
import { existsSync, readFileSync } from 'node:fs'
import { createConnection, Socket } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startPtyHost, PTY_HOST_PROTOCOL_VERSION } from 'ptykit/pty-host'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { ptyHostPaths } from '../../src/pty-host/socket-security.js'
import { hostFixture, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

/** A program that ignores the hang-up and SIGTERM, and writes its pid to `pidFile` once it does. */
const stubborn = (pidFile: string): string[] => ['-c', `trap '' HUP TERM; echo $$ > ${pidFile}; exec sleep 600`]

/** The pid the stubborn program wrote. */
const pidIn = async (pidFile: string): Promise<number> =>
  Number(await waitFor(() => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() || undefined : undefined), 'the program to be up'))

/** Uncaught exceptions and unhandled rejections of this process while the test runs. */
function watchForProblems(): unknown[] {
  const problems: unknown[] = []
  const onProblem = (error: unknown): void => void problems.push(error)
  process.on('uncaughtException', onProblem)
  process.on('unhandledRejection', onProblem)
  cleanups.push(async () => void (process.off('uncaughtException', onProblem), process.off('unhandledRejection', onProblem)))
  return problems
}

describe('a pty host closed while a session is slow to die (its exit comes after the disposal)', () => {
  it('writes nothing to a connection its close has ended', async () => {
    const { socketPath, dir } = hostFixture(cleanups)
    const problems = watchForProblems()
    // Every write to a socket of this process (the in-process host's) after it was ended or destroyed.
    const writesAfterEnd: string[] = []
    const write = Socket.prototype.write
    Socket.prototype.write = function (this: Socket, ...args: unknown[]): boolean {
      if (this.writableEnded || this.destroyed) writesAfterEnd.push(new Error('written after end').stack ?? '')
      return (write as (...written: unknown[]) => boolean).apply(this, args)
    } as typeof write
    cleanups.push(async () => void (Socket.prototype.write = write))
    const host = await startPtyHost({ socketPath, idleExitMs: 60_000, nodePty: { shutdownDeadlineMs: 0 } })
    cleanups.push(() => host.close())
    // A client that follows the session and keeps its side of the connection open (a busy app):
    // the close ends the connection and waits up to PTY_HOST_CLOSE_FLUSH_MS for it to drain.
    const socket = createConnection({ path: socketPath, allowHalfOpen: true })
    socket.on('error', () => undefined)
    cleanups.push(async () => void socket.destroy())
    socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'hello', secret: readFileSync(`${socketPath}.secret`, 'utf8').trim() }))
    const pidFile = join(dir, 'pid')
    socket.write(encodeFrame({ v: PTY_HOST_PROTOCOL_VERSION, type: 'request', id: 1, method: 'spawn', params: { sessionId: 'late-1', file: '/bin/sh', args: stubborn(pidFile) } }))
    const pid = await pidIn(pidFile)
    await host.close()
    await waitFor(() => (isDead(pid) ? true : undefined), 'the program to be killed', 10_000)
    // Its exit has reached the host by now (the host reaps its child as it dies).
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(writesAfterEnd).toEqual([])
    expect(problems).toEqual([])
  }, 30_000)

  it('after the close: no throw, the journal untouched, and a successor answers truthfully for the session', async () => {
    const { socketPath, dir } = hostFixture(cleanups)
    const problems = watchForProblems()
    let closed = 0
    const host = await startPtyHost({ socketPath, idleExitMs: 60_000, nodePty: { shutdownDeadlineMs: 0 }, onClosed: () => void closed++ })
    cleanups.push(() => host.close())
    const client = await rawClient(socketPath)
    cleanups.push(async () => client.close())
    const pidFile = join(dir, 'pid')
    const spawned = await client.request('spawn', { sessionId: 'late-2', file: '/bin/sh', args: stubborn(pidFile) })
    const { incarnationId } = spawned.result as { incarnationId: string }
    const pid = await pidIn(pidFile)
    await host.close()
    expect(closed).toBe(1)
    // The close kept the journal (it holds the exit the close heard, for the hosts after it).
    const journalPath = ptyHostPaths(socketPath).journalPath
    const atClose = readFileSync(journalPath, 'utf8')
    expect(atClose).toContain('"late-2"')
    await waitFor(() => (isDead(pid) ? true : undefined), 'the program to be killed', 10_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    // The exit that came after the close was not written to the closed journal (a successor may own the file by now).
    expect(readFileSync(journalPath, 'utf8')).toBe(atClose)
    expect(problems).toEqual([])
    // The successor proves the session ended (its process is gone), and lists the exit the closing
    // host journalled: the close's SIGKILL, an operator close.
    const successor = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    cleanups.push(() => successor.close())
    const reader = await rawClient(socketPath)
    cleanups.push(async () => reader.close())
    expect((await reader.request('probe', { ptyId: 'late-2', expectedIncarnationId: incarnationId })).result).toBe(false)
    expect((await reader.request('list', {})).result).toEqual([])
    expect(((await reader.request('exits', {})).result as { ptyId: string }[]).filter((exit) => exit.ptyId === 'late-2')).toEqual([
      { v: PTY_HOST_PROTOCOL_VERSION, type: 'exit', ptyId: 'late-2', code: expect.any(Number), cause: { kind: 'signaled', signal: 9 }, incarnationId, stopRequestedBeforeDeath: true },
    ])
  }, 30_000)
})
