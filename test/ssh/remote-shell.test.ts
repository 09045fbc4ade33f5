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
})
