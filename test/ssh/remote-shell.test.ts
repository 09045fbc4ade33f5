/**
 * The side shell: one `/bin/sh` per connection for signals and `/proc` reads. These tests drive it
 * over a scripted channel (no server).
 */
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { RemoteShell } from '../../src/ssh/remote-shell.js'
import type { Ssh2Channel } from '../../src/ssh/ssh2-module.js'

/** A channel that starts the shell and answers every script with `out` and status 0. */
function answeringChannel(command: string, out: string): Ssh2Channel {
  const channel = Object.assign(new EventEmitter(), {
    stderr: { resume: () => undefined },
    write: (text: string) => {
      const end = /ptykit-side-end-[0-9a-f]+/.exec(text)?.[0]
      if (end !== undefined) setImmediate(() => channel.emit('data', Buffer.from(`${out}\n${end}:0\n`)))
      return true
    },
    close: () => channel.emit('close'),
  })
  const ready = /ptykit-side-ready-[0-9a-f]+/.exec(command)?.[0]
  setImmediate(() => channel.emit('data', Buffer.from(`${ready}\n`)))
  return channel as unknown as Ssh2Channel
}

describe('the side shell', () => {
  it('starts again on the next script after a start that failed (the server refused the channel once)', async () => {
    let opens = 0
    const shell = new RemoteShell(async (command) => {
      opens += 1
      if (opens === 1) throw new Error('(SSH) Channel open failure: open failed')
      return answeringChannel(command, 'hello')
    })
    expect(await shell.run('echo hello', 1_000)).toBeNull()
    expect(await shell.run('echo hello', 1_000)).toEqual({ stdout: 'hello\n', code: 0 })
    expect(opens).toBe(2)
    // Started, it stays: the next script runs on the same shell.
    expect(await shell.run('echo hello', 1_000)).toEqual({ stdout: 'hello\n', code: 0 })
    expect(opens).toBe(2)
    shell.close()
  })

  it('writes the scripts asked for together in one write, and answers each with its own output, in order', async () => {
    const writes: string[] = []
    let hang = ''
    let opens = 0
    const shell = new RemoteShell(async (command) => {
      opens += 1
      const channel = answeringChannel(command, '')
      const answer = (text: string): boolean => {
        writes.push(text)
        // Answer every script of the write with its own `echo` argument (none for the one told to hang).
        const replies = [...text.matchAll(/echo (\S+)\n\) <\/dev\/null 2>\/dev\/null\nprintf '\\n(ptykit-side-end-[0-9a-f]+)/g)]
          .filter(([, word]) => word !== hang)
          .map(([, word, end]) => `${word}\n${end}:0\n`)
        setImmediate(() => (channel as unknown as EventEmitter).emit('data', Buffer.from(replies.join(''))))
        return true
      }
      ;(channel as unknown as { write: (text: string) => boolean }).write = answer
      return channel
    })
    expect(await shell.run('echo started', 1_000)).toEqual({ stdout: 'started\n', code: 0 })
    // Five asked at once (as 60 stops of lost PTYs poll at once): one write, not a round trip each.
    const words = ['one', 'two', 'three', 'four', 'five']
    const answers = await Promise.all(words.map((word) => shell.run(`echo ${word}`, 1_000)))
    expect(answers.map((result) => result?.stdout)).toEqual(words.map((word) => `${word}\n`))
    expect(writes).toHaveLength(2)

    // A script that does not answer in time answers null; the ones before it their output, and the
    // ones after it (which never started) theirs, from a fresh shell.
    hang = 'stuck'
    const opensBefore = opens
    const batch = [shell.run('echo six', 1_000), shell.run('echo before', 1_000), shell.run('echo stuck', 50), shell.run('echo after', 1_000)]
    expect((await Promise.all(batch)).map((result) => result?.stdout ?? null)).toEqual(['six\n', 'before\n', null, 'after\n'])
    expect(opens).toBe(opensBefore + 1)
    // Asked the moment a script timed out: it runs on a fresh shell, never on the one being closed
    // (before: written to that one, it answered null without running).
    hang = 'stuck-again'
    const stuck = shell.run('echo stuck-again', 50)
    const late = stuck.then(() => shell.run('echo late', 1_000))
    expect(await stuck).toBeNull()
    expect(await late).toEqual({ stdout: 'late\n', code: 0 })
    hang = ''
    expect(await shell.run('echo again', 1_000)).toEqual({ stdout: 'again\n', code: 0 })
    shell.close()
    // Closed: nothing runs, and no shell is opened again.
    expect(await shell.run('echo closed', 1_000)).toBeNull()
    expect(opens).toBe(opensBefore + 2)
  })

  /** A channel whose shell never says it is ready (its login shell sleeps in an rc file); records its requests. */
  function startingChannel(requests: string[]): Ssh2Channel {
    const channel = Object.assign(new EventEmitter(), {
      stderr: { resume: () => undefined },
      write: () => true,
      signal: (name: string) => void requests.push(`signal ${name}`),
      close: () => {
        requests.push('close')
        setImmediate(() => channel.emit('close'))
      },
    })
    return channel as unknown as Ssh2Channel
  }

  it('answers a script null within its timeout while the shell is still starting (its timeout counts from the call)', async () => {
    const requests: string[] = []
    const shell = new RemoteShell(async () => startingChannel(requests))
    const calledAt = performance.now()
    // Before: the timeout began only once the shell was ready — here up to the 15 s start timeout.
    expect(await shell.run('echo hello', 100)).toBeNull()
    expect(performance.now() - calledAt).toBeLessThan(2_000)
    await shell.close()
  })

  it('answers a script null within its timeout while the shell\'s channel is not even open (a frozen link)', async () => {
    const shell = new RemoteShell(() => new Promise<Ssh2Channel>(() => undefined))
    const calledAt = performance.now()
    expect(await shell.run('echo hello', 100)).toBeNull()
    expect(performance.now() - calledAt).toBeLessThan(2_000)
  })

  it('closed while still starting: its login shell is sent KILL before its channel closes', async () => {
    const requests: string[] = []
    const shell = new RemoteShell(async () => startingChannel(requests))
    shell.warmUp()
    await new Promise((resolve) => setImmediate(resolve))
    await shell.close()
    // Before: only closed — a channel without a pty is not hung up, and the rc file ran on.
    expect(requests).toEqual(['signal KILL', 'close'])
  })

  it('closed while its channel open is in flight: resolves once the open answered, and that channel is ended', async () => {
    const requests: string[] = []
    let answer!: (channel: Ssh2Channel) => void
    const shell = new RemoteShell(() => new Promise<Ssh2Channel>((resolve) => (answer = resolve)))
    shell.warmUp()
    let closed = false
    const closing = shell.close().then(() => void (closed = true))
    await new Promise((resolve) => setTimeout(resolve, 20))
    // The server has the exec request: its login shell will run whatever becomes of the connection.
    expect(closed).toBe(false)
    answer(startingChannel(requests))
    await closing
    expect(requests).toEqual(['signal KILL', 'close'])
  })
})
