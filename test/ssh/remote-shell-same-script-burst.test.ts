/**
 * The side shell asked the same script many times at once — a listing from each of many callbacks
 * reads every PTY's `/proc` with one script per PTY — while a stop's look waits in the same queue.
 * Before: every call was queued and run on its own, so 300 listings of 42 PTYs queued 12 600
 * scripts, the stops' looks behind them missed their deadline, and each SSH stop rejected
 * `shutdown_timeout` ("the side shell did not answer") after its PTY had exited — one
 * `shutdown_failed` per stop step on the controller (116 for 42 PTYs in the 7 Dec multi-host
 * audit). Now a script asked while the same one is still queued joins it: one run answers both.
 * Driven over a scripted channel whose remote spends 2 ms per script (no server).
 */
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { RemoteShell } from '../../src/ssh/remote-shell.js'
import type { Ssh2Channel } from '../../src/ssh/ssh2-module.js'

/** Per script, what the scripted remote spends before it answers. */
const REMOTE_MS_PER_SCRIPT = 2

/** A shell that answers each script with its `echo` word, after {@link REMOTE_MS_PER_SCRIPT} per script of the write; counts the scripts run. */
function slowRemote(): { shell: RemoteShell; scriptsRun: () => number } {
  let run = 0
  const shell = new RemoteShell(async (command) => {
    const channel = Object.assign(new EventEmitter(), {
      stderr: { resume: () => undefined },
      write: (text: string) => {
        const replies = [...text.matchAll(/echo (\S+)\n\) <\/dev\/null 2>\/dev\/null\nprintf '\\n(ptykit-side-end-[0-9a-f]+)/g)].map(([, word, end]) => `${word}\n${end}:0\n`)
        run += replies.length
        setTimeout(() => channel.emit('data', Buffer.from(replies.join(''))), replies.length * REMOTE_MS_PER_SCRIPT)
        return true
      },
      signal: () => undefined,
      close: () => setImmediate(() => channel.emit('close')),
    })
    const ready = /ptykit-side-ready-[0-9a-f]+/.exec(command)?.[0]
    setImmediate(() => channel.emit('data', Buffer.from(`${ready}\n`)))
    return channel as unknown as Ssh2Channel
  })
  return { shell, scriptsRun: () => run }
}

describe('the side shell asked the same script many times at once', () => {
  it('runs a script asked again while still queued once, and a look queued behind the burst answers in time', async () => {
    const { shell, scriptsRun } = slowRemote()
    try {
      expect(await shell.run('echo started', 1_000)).toEqual({ stdout: 'started\n', code: 0 })
      // 300 listings of 10 PTYs: each PTY's read asked 300 times, all while the shell is busy.
      const reads = Array.from({ length: 300 }, () => Array.from({ length: 10 }, (_, pty) => shell.run(`echo pty-${pty}`, 3_000))).flat()
      // A stop's look, asked after the burst with what is left of its stop's deadline.
      const look = shell.run('echo look', 1_000)
      // Before: 3 000 scripts at 2 ms each — the look, behind them, answered null at its deadline.
      expect(await look).toEqual({ stdout: 'look\n', code: 0 })
      const answers = await Promise.all(reads)
      expect(new Set(answers.map((answer) => answer?.stdout))).toEqual(new Set(Array.from({ length: 10 }, (_, pty) => `pty-${pty}\n`)))
      // One run per distinct script queued (the first read of each may have been written alone).
      expect(scriptsRun()).toBeLessThanOrEqual(1 + 2 * 10 + 1)
    } finally {
      await shell.close()
    }
  })

  it('answers each caller of a joined script null at its own deadline, not at the latest caller\'s', async () => {
    // A shell that never answers a script: every caller answers null at its own timeout.
    const shell = new RemoteShell(async (command) => {
      const channel = Object.assign(new EventEmitter(), { stderr: { resume: () => undefined }, write: () => true, signal: () => undefined, close: () => setImmediate(() => channel.emit('close')) })
      const ready = /ptykit-side-ready-[0-9a-f]+/.exec(command)?.[0]
      setImmediate(() => channel.emit('data', Buffer.from(`${ready}\n`)))
      return channel as unknown as Ssh2Channel
    })
    try {
      const calledAt = performance.now()
      const times: number[] = []
      const first = shell.run('echo busy', 150)
      const early = shell.run('echo same', 50).then((answer) => (times.push(performance.now() - calledAt), answer))
      const late = shell.run('echo same', 400).then((answer) => (times.push(performance.now() - calledAt), answer))
      expect(await Promise.all([first, early, late])).toEqual([null, null, null])
      // The early caller was not held to the later one's deadline.
      expect(times[0]).toBeLessThan(300)
    } finally {
      await shell.close()
    }
  })
})
