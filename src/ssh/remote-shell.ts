import { randomBytes } from 'node:crypto'
import type { SideCommandResult } from './ssh-connection.js'
import type { Ssh2Channel } from './ssh2-module.js'

/**
 * How long the side shell gets to start. It starts through the login user's shell, whose rc files
 * run first: root's `.bashrc` here runs `pyenv init` and took ~4 s on a loaded 2-core machine
 * (measured), which is why side commands share one long-lived shell instead of one login each.
 */
export const SSH_SIDE_SHELL_START_TIMEOUT_MS = 15_000

/**
 * The most scripts written to the side shell at once. The scripts queued while one batch runs go
 * out together as the next: a stop of many lost PTYs, or a listing of many, asks the remote once
 * per batch instead of paying a round trip per script (60 lost PTYs' stops, one script at a time,
 * ran ~33 ms each and missed a 15 s deadline; measured).
 */
const SIDE_SHELL_BATCH_MAX = 64

type Request = { script: string; timeoutMs: number; resolve: (result: SideCommandResult | null) => void }

/**
 * One `/bin/sh` on a side channel (no pty) of a connection, running short scripts in order:
 * signals to a process group, `/proc` reads. Each script runs in a subshell with stdin from
 * `/dev/null`, and its end is framed by a nonce line carrying its status. The scripts queued
 * while the shell is busy are written together (see {@link SIDE_SHELL_BATCH_MAX}). A script that
 * does not finish in time resets the shell (the next one starts a fresh shell).
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
    // Forgotten at once, before any await: the next script must start a fresh shell, never be
    // written to this one while it is being closed.
    const closing = this.#channel
    this.#channel = null
    const channel = await closing?.catch(() => null)
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
      while (this.#queue.length > 0) {
        if (this.#closed) {
          for (const request of this.#queue.splice(0)) request.resolve(null)
          break
        }
        const channel = await this.#start()
        const batch = this.#queue.splice(0, SIDE_SHELL_BATCH_MAX)
        if (channel === null || this.#closed) {
          for (const request of batch) request.resolve(null)
          continue
        }
        await this.#runBatchOn(channel, batch)
      }
    } finally {
      this.#busy = false
    }
  }

  /**
   * Write every script of `batch` at once and read their answers in order. Each script gets its
   * `timeoutMs` from the moment the one before it answered (when it starts running). One that does
   * not answer in time, or is running when the shell closes, answers `null` and resets the shell;
   * the scripts after it run again on the fresh shell (they are probes and signals: running one
   * twice, should the old shell have got to it, is harmless).
   */
  #runBatchOn(channel: Ssh2Channel, batch: Request[]): Promise<void> {
    const ends = batch.map(() => `ptykit-side-end-${randomBytes(6).toString('hex')}`)
    const patterns = ends.map((end) => new RegExp(`${end}:(\\d+)\\n`))
    return new Promise((done) => {
      let answered = 0
      let output = ''
      let timer: NodeJS.Timeout | undefined
      const finish = (failed: boolean): void => {
        if (timer === undefined) return
        clearTimeout(timer)
        timer = undefined
        channel.removeListener?.('data', onData)
        channel.removeListener?.('close', onClose)
        if (failed) {
          // The script that did not answer in time (or the one running when the shell closed)
          // answers null; the ones after it never started, and go first to the fresh shell.
          batch[answered]?.resolve(null)
          this.#queue.unshift(...batch.slice(answered + 1))
          void this.#reset()
        }
        done()
      }
      const waitFor = (request: Request): void => {
        clearTimeout(timer)
        timer = setTimeout(() => finish(true), request.timeoutMs)
      }
      const onData = (chunk: Buffer): void => {
        if (timer === undefined) return
        output += chunk.toString('utf8')
        for (let match = patterns[answered]!.exec(output); match !== null; match = patterns[answered]!.exec(output)) {
          batch[answered]!.resolve({ stdout: output.slice(0, match.index), code: Number(match[1]) })
          output = output.slice(match.index + match[0].length)
          if (++answered === batch.length) return finish(false)
          waitFor(batch[answered]!)
        }
      }
      const onClose = (): void => finish(true)
      waitFor(batch[0]!)
      channel.on('data', onData)
      channel.on('close', onClose)
      channel.write(ends.map((end, index) => `(\n${batch[index]!.script}\n) </dev/null 2>/dev/null\nprintf '\\n${end}:%s\\n' "$?"\n`).join(''))
    })
  }
}
