/**
 * A pty host process closed (SIGTERM) with a tiny stop deadline (`nodePty.shutdownDeadlineMs`),
 * while a session ignores the hang-up and SIGTERM — a program whose only end is a SIGKILL.
 *
 * Found: the node-pty provider's stop sends its SIGKILL from its own loop, after an asynchronous
 * look at the process table; its `dispose()` resolved at the deadline before that SIGKILL went
 * out, and the host process exited at the end of its close — the SIGKILL was never sent. The
 * program and its children outlived their closed host (the journal's line the only trace of them).
 * And the exit of a session heard after the close had closed its journal was not journalled: the
 * next host answered "ended, cause unknown" for it. Now the close kills what is left,
 * synchronously, and keeps the journal open (bounded) until those exits are in: the next host
 * lists the session's exit, the operator close it was.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startPtyHost } from 'ptykit/pty-host'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { isDead, waitFor } from '../node-pty/pty-test-support.js'
import { killHostAndClean, killSessionMembers, makeSocketDir, rawClient, sessionMembers, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

const HOST = resolve(import.meta.dirname, 'fixtures', 'host-closing-with-deadline.ts')

/** Start the host process on `socketPath` with `deadlineMs`; resolves with it once it listens. */
async function hostProcess(socketPath: string, deadlineMs: number): Promise<{ pid: number; exited: Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, [...nodeArgsFor(HOST), socketPath, String(deadlineMs)], { stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  let stdout = ''
  await new Promise<void>((ready, failed) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      if (stdout.includes('listening')) ready()
    })
    child.once('exit', (code) => failed(new Error(`the host exited (${code}) before it listened: ${stderr}`)))
  })
  return { pid: child.pid!, exited, stderr: () => stderr }
}

describe('a pty host process closed with a tiny stop deadline, a session ignoring the hang-up and SIGTERM', () => {
  for (const deadlineMs of [0, 1]) {
    it(`kills the session before it exits, and journals its exit (shutdownDeadlineMs ${deadlineMs})`, async () => {
      const { dir, socketPath } = makeSocketDir()
      cleanups.push(() => killHostAndClean(socketPath, dir))
      const host = await hostProcess(socketPath, deadlineMs)
      const client = await rawClient(socketPath)
      const pidFile = join(dir, 'pid')
      const spawned = await client.request('spawn', {
        sessionId: 'stuck-1',
        file: '/bin/sh',
        args: ['-c', `trap '' HUP TERM; echo $$ > ${pidFile}; while :; do sleep 1; done`],
      })
      const { incarnationId } = spawned.result as { incarnationId: string }
      const leader = Number(await waitFor(() => (existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() || undefined : undefined), 'the program to be up'))
      cleanups.push(async () => {
        killSessionMembers(leader)
      })
      // The loop's `sleep` runs beside its shell: two processes in the session.
      await waitFor(() => (sessionMembers(leader).length >= 2 ? true : undefined), 'the loop to run its sleep')
      // No app connected: the close has no connection to drain, and ends the process at once.
      client.close()
      process.kill(host.pid, 'SIGTERM')
      expect(await host.exited).toBe(0)
      // The SIGKILL went out before the host exited: nothing of the session is left (its
      // processes die as the kernel delivers it — a few ms; before, they ran on for good).
      await waitFor(() => (sessionMembers(leader).length === 0 && isDead(leader) ? true : undefined), 'the session to be gone', 5_000)
      // Its exit was journalled before the close ended: the next host lists it, the operator close it was.
      const successor = await startPtyHost({ socketPath, idleExitMs: 60_000 })
      cleanups.push(() => successor.close())
      const reader = await rawClient(socketPath)
      cleanups.push(async () => reader.close())
      const exits = (await reader.request('exits', {})).result as { ptyId: string }[]
      expect(exits.filter((exit) => exit.ptyId === 'stuck-1')).toEqual([
        expect.objectContaining({ ptyId: 'stuck-1', cause: { kind: 'signaled', signal: 9 }, incarnationId, stopRequestedBeforeDeath: true }),
      ])
      expect(exits.find((exit) => exit.ptyId === 'stuck-1')).not.toHaveProperty('diedBeforeStopRequest')
      expect(host.stderr()).toBe('')
    }, 30_000)
  }
})
