import { randomBytes } from 'node:crypto'
import type { SideCommandResult } from './ssh-connection.js'
import type { Ssh2Channel } from './ssh2-module.js'

/**
 * How long the side shell gets to start. It starts through the login user's shell, whose rc files
 * run first: root's `.bashrc` here runs `pyenv init` and took ~4 s on a loaded 2-core machine
 * (measured), which is why side commands share one long-lived shell instead of one login each.
 */
export const SSH_SIDE_SHELL_START_TIMEOUT_MS = 15_000

type Request = { script: string; timeoutMs: number; resolve: (result: SideCommandResult | null) => void }

/**
 * One `/bin/sh` on a side channel (no pty) of a connection, running short scripts one at a time:
 * signals to a process group, `/proc` reads. Each script runs in a subshell with stdin from
 * `/dev/null`, and its end is framed by a nonce line carrying its status. A script that does not
 * finish in time resets the shell (the next one starts a fresh shell).
 */
export class RemoteShell {
  readonly #open: (command: string) => Promise<Ssh2Channel>
  #channel: Promise<Ssh2Channel | null> | null = null
  #queue: Request[] = []
  #busy = false
  #closed = false

  /** Create a shell that opens its channel with `open` on first use. */
  constructor(open: (command: string) => Promise<Ssh2Channel>) {
    this.#open = open
  }

  /** Run a script; `null` when the shell could not run it (or in time). */
  run(script: string, timeoutMs: number): Promise<SideCommandResult | null> {
    if (this.#closed) return Promise.resolve(null)
    return new Promise((resolve) => {
      this.#queue.push({ script, timeoutMs, resolve })
      void this.#pump()
    })
  }

  /** Start the shell now, so the first real request does not pay for the login's rc files. */
  warmUp(): void {
    void this.#start()
  }

  /** Close the shell; pending scripts answer `null`. */
  close(): void {
    this.#closed = true
    void this.#reset()
    for (const request of this.#queue.splice(0)) request.resolve(null)
  }

  #start(): Promise<Ssh2Channel | null> {
    if (this.#channel !== null) return this.#channel
    const started: Promise<Ssh2Channel | null> = (async () => {
      const ready = `ptykit-side-ready-${randomBytes(6).toString('hex')}`
      let channel: Ssh2Channel
      try {
        channel = await this.#open(`exec /bin/sh -c 'echo ${ready}; exec /bin/sh -s'`)
      } catch {
        return null
      }
      channel.stderr.resume()
      channel.on('error', () => undefined)
      channel.on('close', () => {
        if (this.#channel === started) this.#channel = null
      })
      const isReady = await new Promise<boolean>((resolve) => {
        let seen = ''
        const timer = setTimeout(() => resolve(false), SSH_SIDE_SHELL_START_TIMEOUT_MS)
        const onData = (chunk: Buffer): void => {
          seen += chunk.toString('utf8')
          if (!seen.includes(ready)) return
          clearTimeout(timer)
          channel.removeListener?.('data', onData)
          resolve(true)
        }
        channel.on('data', onData)
        channel.on('close', () => {
          clearTimeout(timer)
          resolve(false)
        })
      })
      if (!isReady) {
        channel.close()
        return null
      }
      return channel
    })()
    this.#channel = started
    // A start that failed (the channel refused, or the shell never ready) is not kept: the next
    // script tries again, as after a reset — kept, it answered every later script `null`.
    void started.then((channel) => {
      if (channel === null && this.#channel === started) this.#channel = null
    })
    return started
  }

  async #reset(): Promise<void> {
    const channel = await this.#channel?.catch(() => null)
    this.#channel = null
    try {
      channel?.close()
    } catch {
      // Already closed.
    }
  }

  async #pump(): Promise<void> {
    if (this.#busy) return
    this.#busy = true
    try {
      for (let request = this.#queue.shift(); request !== undefined; request = this.#queue.shift()) {
        const channel = await this.#start()
        request.resolve(channel === null ? null : await this.#runOn(channel, request))
      }
    } finally {
      this.#busy = false
    }
  }

  #runOn(channel: Ssh2Channel, request: Request): Promise<SideCommandResult | null> {
    const end = `ptykit-side-end-${randomBytes(6).toString('hex')}`
    const pattern = new RegExp(`${end}:(\\d+)\\n`)
    return new Promise((resolve) => {
      let output = ''
      const finish = (result: SideCommandResult | null): void => {
        clearTimeout(timer)
        channel.removeListener?.('data', onData)
        channel.removeListener?.('close', onClose)
        if (result === null) void this.#reset()
        resolve(result)
      }
      const onData = (chunk: Buffer): void => {
        output += chunk.toString('utf8')
        const match = pattern.exec(output)
        if (match !== null) finish({ stdout: output.slice(0, match.index), code: Number(match[1]) })
      }
      const onClose = (): void => finish(null)
      const timer = setTimeout(() => finish(null), request.timeoutMs)
      channel.on('data', onData)
      channel.on('close', onClose)
      channel.write(`(\n${request.script}\n) </dev/null 2>/dev/null\nprintf '\\n${end}:%s\\n' "$?"\n`)
    })
  }
}
