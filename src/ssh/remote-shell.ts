import { randomBytes } from 'node:crypto'
import { clampTimerDelay } from '../contracts/deadline.js'
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

/** One caller of a script: answered with the script's result, or `null` at its own deadline. */
type Waiter = {
  resolve: (result: SideCommandResult | null) => void
  /** Answers this caller `null` at its deadline (its `timeoutMs` from its `run` call). */
  timer: NodeJS.Timeout
}

type Request = {
  script: string
  /**
   * When it stops being waited for, on the wait clock (`performance.now()`): the latest of its
   * callers' deadlines (each caller's `timeoutMs` from its own call).
   */
  deadline: number
  /** Answers every caller still waiting. */
  resolve: (result: SideCommandResult | null) => void
  /** The callers still waiting for it: one, or more when the same script was asked while this one was queued. */
  waiters: Set<Waiter>
}

/** One start of the shell: its channel once the server opened it, and whether the shell said it is ready. */
type ShellStart = {
  /** The channel, once opened (`null` before, or when the open failed). */
  channel: Ssh2Channel | null
  /** True once the shell printed its ready line (the login's rc files are behind it). */
  ready: boolean
  /** Settles once the open settled — and, for a start given up meanwhile, its channel was ended. */
  opened: Promise<void>
  /** The channel once the shell is ready; `null` when it never was. */
  started: Promise<Ssh2Channel | null>
}

/**
 * End a side shell's channel: the SSH `signal` request `KILL` (OpenSSH sends it to the shell's
 * process group — the login shell still in its rc files and what they started, or the ready shell
 * and a script that hung; it ignores the request for root logins), then the close. Why not only
 * the close: a channel without a pty is not hung up when it closes, and a login shell that sleeps
 * in its rc file ran on after the connection closed, until its rc ended.
 */
function endShellChannel(channel: Ssh2Channel): void {
  try {
    channel.signal('KILL')
  } catch {
    // Closing already, or a channel without signals.
  }
  try {
    channel.close()
  } catch {
    // Already closed.
  }
}

/**
 * One `/bin/sh` on a side channel (no pty) of a connection, running short scripts in order:
 * signals to a process group, `/proc` reads. Each script runs in a subshell with stdin from
 * `/dev/null`, and its end is framed by a nonce line carrying its status. The scripts queued
 * while the shell is busy are written together (see {@link SIDE_SHELL_BATCH_MAX}). A script's
 * `timeoutMs` counts from its `run` call — the wait for the shell to start (the login's rc files),
 * and for the scripts before it, included: until 7 Dec it counted only once the script was
 * written, and a side command on a frozen link, or behind a slow rc file, waited past it for as
 * long as the start took. A script that does not finish in time resets the shell (the next one
 * starts a fresh shell); one still queued at its deadline just answers `null`.
 */
export class RemoteShell {
  readonly #open: (command: string) => Promise<Ssh2Channel>
  #shell: ShellStart | null = null
  #queue: Request[] = []
  /** The queued requests (not yet written to a shell) by script, for a caller asking the same script to join. */
  readonly #queued = new Map<string, Request>()
  #busy = false
  #closed = false

  /** Create a shell that opens its channel with `open` on first use. */
  constructor(open: (command: string) => Promise<Ssh2Channel>) {
    this.#open = open
  }

  /**
   * Run a script; `null` when the shell could not run it within `timeoutMs` of this call. A script
   * asked again while the same script is still queued (not yet written to the shell) joins it: one
   * run, after both calls, answers both — as a listing from each of many callbacks asks the same
   * `/proc` read of every PTY (300 listings of 42 PTYs queued 12 600 scripts, and the stops' looks
   * behind them missed their deadline). Each caller is still answered `null` at its own deadline.
   */
  run(script: string, timeoutMs: number): Promise<SideCommandResult | null> {
    if (this.#closed) return Promise.resolve(null)
    return new Promise((resolve) => {
      const deadline = performance.now() + timeoutMs
      let request = this.#queued.get(script)
      if (request === undefined) {
        const waiters = new Set<Waiter>()
        const created: Request = {
          script,
          deadline,
          waiters,
          resolve: (result) => {
            if (this.#queued.get(script) === created) this.#queued.delete(script)
            for (const waiter of waiters) {
              clearTimeout(waiter.timer)
              waiter.resolve(result)
            }
            waiters.clear()
          },
        }
        request = created
        this.#queued.set(script, request)
        this.#queue.push(request)
      } else {
        request.deadline = Math.max(request.deadline, deadline)
      }
      const joined = request
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          // Given up at this caller's deadline. Once the script was written, the batch's own timer
          // decides about the shell (at the latest caller's deadline); still queued with nobody
          // left waiting, it is dropped.
          joined.waiters.delete(waiter)
          resolve(null)
          if (joined.waiters.size > 0) return
          const index = this.#queue.indexOf(joined)
          if (index === -1) return
          this.#queue.splice(index, 1)
          if (this.#queued.get(script) === joined) this.#queued.delete(script)
        }, clampTimerDelay(timeoutMs)),
      }
      joined.waiters.add(waiter)
      void this.#pump()
    })
  }

  /** Start the shell now, so the first real request does not pay for the login's rc files. */
  warmUp(): void {
    void this.#start()
  }

  /**
   * Close the shell for good; pending scripts answer `null`. A shell still starting (its login
   * shell in the rc files) or running is sent `KILL` before its channel closes
   * ({@link endShellChannel}). Resolves once nothing of it can start on the server any more: an
   * open still in flight has been answered (and its channel ended) — the connection's close waits
   * for that, bounded, before it ends the connection (an `exec` the server has received runs its
   * login shell whatever became of the connection).
   */
  close(): Promise<void> {
    this.#closed = true
    for (const request of this.#queue.splice(0)) request.resolve(null)
    return this.#reset()
  }

  #start(): Promise<Ssh2Channel | null> {
    if (this.#shell !== null) return this.#shell.started
    let openSettled!: () => void
    const shell: ShellStart = { channel: null, ready: false, opened: new Promise<void>((resolve) => (openSettled = resolve)), started: Promise.resolve(null) }
    shell.started = (async () => {
      const ready = `ptykit-side-ready-${randomBytes(6).toString('hex')}`
      let channel: Ssh2Channel
      try {
        channel = await this.#open(`exec /bin/sh -c 'echo ${ready}; exec /bin/sh -s'`)
      } catch {
        openSettled()
        return null
      }
      shell.channel = channel
      channel.stderr.resume()
      channel.on('error', () => undefined)
      channel.on('close', () => {
        if (this.#shell === shell) this.#shell = null
      })
      // Given up while the open was in flight (closed, or reset): nothing of it may run on.
      if (this.#shell !== shell) {
        endShellChannel(channel)
        openSettled()
        return null
      }
      openSettled()
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
      if (!isReady || this.#shell !== shell) {
        // Its login shell may still sleep in an rc file: killed, not only closed.
        endShellChannel(channel)
        return null
      }
      shell.ready = true
      return channel
    })()
    this.#shell = shell
    // A start that failed (the channel refused, or the shell never ready) is not kept: the next
    // script tries again, as after a reset — kept, it answered every later script `null`.
    void shell.started.then((channel) => {
      if (channel === null && this.#shell === shell) this.#shell = null
    })
    return shell.started
  }

  /**
   * Forget the shell and end its channel ({@link endShellChannel}); resolves once an open still in
   * flight settled (its start ends the channel then).
   */
  async #reset(): Promise<void> {
    // Forgotten at once, before any await: the next script must start a fresh shell, never be
    // written to this one while it is being closed.
    const shell = this.#shell
    this.#shell = null
    if (shell === null) return
    if (shell.channel !== null) endShellChannel(shell.channel)
    await shell.opened
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
        // The scripts whose deadline passed while the shell started have answered `null` already.
        const batch = this.#queue.splice(0, SIDE_SHELL_BATCH_MAX)
        if (batch.length === 0) continue
        // Written from here on: a later caller of the same script asks for a run after its call.
        for (const request of batch) if (this.#queued.get(request.script) === request) this.#queued.delete(request.script)
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
   * Write every script of `batch` at once and read their answers in order. Each script is waited
   * for until its own deadline (its `timeoutMs` from its `run` call). One that does not answer in
   * time, or is running when the shell closes, answers `null` and resets the shell; the scripts
   * after it run again on the fresh shell (they are probes and signals: running one twice, should
   * the old shell have got to it, is harmless) — each still within its own deadline.
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
        timer = setTimeout(() => finish(true), clampTimerDelay(request.deadline - performance.now()))
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
