import { EventEmitter } from 'node:events'
import { closeSync, constants as fsConstants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import fc from 'fast-check'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { ExitDrain, NODE_PTY_DRAIN_GIVE_UP_MS } from '../../src/node-pty/exit-drain.js'
import type { NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'
import { makeFifo } from './pty-test-support.js'

// The drain writes its marker into the PTY's slave side; here a plain file stands in for it, so
// the test can read what was written and feed it back as the master would, split at will.
const dir = mkdtempSync(join(tmpdir(), 'ptykit-drain-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
afterEach(() => vi.useRealTimers())

let files = 0

/** A terminal stand-in with a `ptsName` (a temp file) and a socket whose destroy is observed. */
function fakeTerminal() {
  const ptsName = join(dir, `pts-${(files += 1)}`)
  writeFileSync(ptsName, '')
  const socket = new EventEmitter() as EventEmitter & { destroy: () => void; destroyed: number }
  socket.destroyed = 0
  socket.destroy = () => {
    socket.destroyed += 1
  }
  const terminal = { ptsName, _socket: socket } as unknown as NodePtyTerminal
  return { terminal, socket, written: () => readFileSync(ptsName, 'utf8') }
}

function drainOver(fake: ReturnType<typeof fakeTerminal>) {
  const emitted: string[] = []
  let hints = 0
  const drain = new ExitDrain(fake.terminal, { emit: (data) => emitted.push(data), onDeathHint: () => (hints += 1) }, true)
  return { drain, emitted, hints: () => hints }
}

/** Split `text` at the given cut points. */
function split(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  const pieces: string[] = []
  let last = 0
  for (const point of points) {
    pieces.push(text.slice(last, point))
    last = point
  }
  pieces.push(text.slice(last))
  return pieces.filter((piece) => piece.length > 0)
}

describe('ExitDrain', () => {
  it('P-drain-1: however the master splits tail + marker + late text, everything but the marker is delivered in order, then it releases', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.array(fc.nat(), { maxLength: 10 }), (tail, late, cuts) => {
        const fake = fakeTerminal()
        const { drain, emitted } = drainOver(fake)
        expect(drain.state).toBe('watching')
        // node-pty's 200 ms timer fires while the child is still being drained: held off.
        fake.socket.destroy()
        expect(fake.socket.destroyed).toBe(0)
        drain.noteChildGone()
        expect(drain.state).toBe('marking')
        expect(fake.written()).toBe(drain.marker)
        for (const piece of split(tail + drain.marker + late, cuts)) drain.handleData(piece)
        expect(drain.state).toBe('released')
        expect(drain.gaveUp).toBe(false)
        // The held-off destroy goes through once the marker is back.
        expect(fake.socket.destroyed).toBe(1)
        expect(drain.finish()).toBe('')
        expect(emitted.join('')).toBe(tail + late)
      }),
    )
  })

  it('output before the child is gone is never scanned, even if it looks like a marker', () => {
    const fake = fakeTerminal()
    const { drain, emitted } = drainOver(fake)
    drain.handleData(drain.marker)
    expect(drain.state).toBe('watching')
    expect(emitted).toEqual([drain.marker])
    drain.finish()
  })

  it('the native exit hint reaches the owner, from node-pty’s close subscription and from its destroy', () => {
    const fake = fakeTerminal()
    const { drain, hints } = drainOver(fake)
    fake.socket.once('close', () => {})
    expect(hints()).toBe(1)
    fake.socket.destroy()
    expect(hints()).toBe(2)
    drain.finish()
    // finish released the slave side and let the held destroy through.
    expect(fake.socket.destroyed).toBe(1)
  })

  it('while the consumer pauses, the give-up clock does not run; after resume it does', () => {
    vi.useFakeTimers()
    const fake = fakeTerminal()
    const { drain, emitted } = drainOver(fake)
    drain.notePaused()
    drain.noteChildGone()
    vi.advanceTimersByTime(NODE_PTY_DRAIN_GIVE_UP_MS * 5)
    expect(drain.state).toBe('marking')
    drain.noteResumed()
    drain.handleData('tail-')
    vi.advanceTimersByTime(NODE_PTY_DRAIN_GIVE_UP_MS - 1)
    expect(drain.state).toBe('marking')
    vi.advanceTimersByTime(1)
    expect(drain.state).toBe('released')
    expect(drain.gaveUp).toBe(true)
    // A marker that still comes out after the give-up is cut all the same.
    drain.handleData(`${drain.marker.slice(0, 5)}`)
    drain.handleData(`${drain.marker.slice(5)}late`)
    expect(drain.finish()).toBe('')
    expect(emitted.join('')).toBe('tail-late')
  })

  it('does nothing when asked not to protect, or when there is no slave side to hold', () => {
    const fake = fakeTerminal()
    const off = new ExitDrain(fake.terminal, { emit: () => {}, onDeathHint: () => {} }, false)
    expect(off.state).toBe('unprotected')
    const none = new ExitDrain({} as NodePtyTerminal, { emit: () => {}, onDeathHint: () => {} }, true)
    expect(none.state).toBe('unprotected')
    none.noteChildGone()
    expect(none.state).toBe('unprotected')
  })
})

/**
 * A FIFO standing in for a PTY master (the drain's reads of it answer `EAGAIN`) and a node stream
 * for node-pty's socket over it, its errors' codes collected; the FIFO is closed after `run`.
 */
async function overMasterFifo(name: string, run: (master: { socket: Readable; terminal: NodePtyTerminal; errors: string[] }) => Promise<void>): Promise<void> {
  const fifo = join(dir, name)
  makeFifo(fifo)
  const fd = openSync(fifo, fsConstants.O_RDWR | fsConstants.O_NONBLOCK)
  try {
    const socket = new Readable({ read() {} })
    const terminal = { _fd: fd, _socket: socket, ptsName: join(dir, 'never-opened') } as unknown as NodePtyTerminal
    const errors: string[] = []
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(String(error.code)))
    await run({ socket, terminal, errors })
  } finally {
    closeSync(fd)
  }
}

describe('ExitDrain: libuv’s early end of file (Linux, no slave side held)', () => {
  it('what the master still holds is queued in the stream ahead of the end; a paused consumer gets it on resume, and node-pty’s destroy waits for the end', async () => {
    // A FIFO stands in for the master: the bytes written into it are what the kernel still holds
    // when libuv (wrongly) reports the end; a real node stream stands in for node-pty's socket.
    const fifo = join(dir, 'master-fifo')
    makeFifo(fifo)
    const fd = openSync(fifo, fsConstants.O_RDWR | fsConstants.O_NONBLOCK)
    try {
      writeSync(fd, Buffer.concat([Buffer.from('€').subarray(1), Buffer.from('-tail €')]))
      const socket = new Readable({ read() {}, highWaterMark: 0 })
      socket.setEncoding('utf8')
      const terminal = { _fd: fd, _socket: socket, ptsName: join(dir, 'never-opened') } as unknown as NodePtyTerminal
      const emitted: string[] = []
      const drain = new ExitDrain<string>(terminal, { emit: (chunk) => emitted.push(chunk), onDeathHint: () => {} }, true, false, true)
      expect(drain.state).toBe('watching')
      let ended = false
      socket.on('end', () => (ended = true))
      socket.on('data', (chunk: string) => {
        drain.handleData(chunk)
        // The consumer pauses after its first chunk (flow control).
        if (emitted.length === 1) socket.pause()
      })
      await new Promise((resolve) => setImmediate(resolve))
      // What libuv does: a short read, then the end at POLLHUP. The euro sign's first byte comes
      // in the read, the rest from the master: the stream's own decoder joins them.
      socket.push(Buffer.concat([Buffer.from('head'), Buffer.from('€').subarray(0, 1)]))
      socket.push(null)
      expect(drain.state).toBe('released')
      expect(emitted).toEqual(['head'])
      // node-pty's destroy 200 ms after the exit (whose callback proved the child gone) must not
      // drop what the paused stream holds.
      drain.noteChildGone()
      socket.destroy()
      expect(socket.destroyed).toBe(false)
      socket.resume()
      await new Promise((resolve) => setImmediate(resolve))
      expect(emitted.join('')).toBe('head€-tail €')
      expect(ended).toBe(true)
      // The stream closed itself after its end (which is what node-pty waits for to report the exit).
      expect(socket.destroyed).toBe(true)
    } finally {
      closeSync(fd)
    }
  })

  it('an end of the stream asks the owner to look at the child once; a look that proves it gone closes the master in that call, with no poll', async () => {
    // What an exit usually looks like: the child's death closed its last fd on the terminal, the
    // master hangs up, and node-pty's report of the reap is still on its way. The master must close
    // now, as node-pty's own stream does, not only once that report comes (issue 18, spawn → exit).
    vi.useFakeTimers({ toFake: ['setTimeout'] })
    await overMasterFifo('master-fifo-dead', async ({ socket, terminal, errors }) => {
      let looks = 0
      const drain: ExitDrain<Buffer> = new ExitDrain<Buffer>(terminal, { emit: () => {}, onDeathHint: () => ((looks += 1), drain.noteChildGone()) }, true, true, true)
      socket.on('data', (chunk: Buffer) => drain.handleData(chunk))
      // libuv's read at the hang-up: EIO, the end of the output (Linux flushed every byte first).
      socket.destroy(Object.assign(new Error('read EIO'), { code: 'EIO' }))
      expect(looks).toBe(1)
      expect(drain.state).toBe('released')
      expect(drain.proof).toBe('end-of-file')
      expect(socket.destroyed).toBe(true)
      // No late poll of the master was armed for a child proven gone.
      expect(vi.getTimerCount()).toBe(0)
      await new Promise((resolve) => setImmediate(resolve))
      expect(errors).toEqual(['EIO'])
    })
  })

  it('an end while the child lives (it let go of the terminal) keeps the master open until the child is gone', async () => {
    await overMasterFifo('master-fifo-live', async ({ socket, terminal, errors }) => {
      let looks = 0
      const drain = new ExitDrain<Buffer>(terminal, { emit: () => {}, onDeathHint: () => (looks += 1) }, true, true, true)
      socket.on('data', (chunk: Buffer) => drain.handleData(chunk))
      let closed = false
      socket.on('close', () => (closed = true))
      // (A 'close' listener is node-pty's sign of its native exit: not counted here.)
      looks = 0
      // libuv's end at the master's hang-up: no process holds the terminal any more.
      socket.push(null)
      await new Promise((resolve) => setImmediate(resolve))
      expect(drain.state).toBe('released')
      // The stream ended and destroyed itself (autoDestroy), and node-pty's stream would close the
      // master with it — whose hang-up kills a program that still runs. The owner looked once and
      // found the child alive. Held:
      expect(looks).toBe(1)
      expect(socket.destroyed).toBe(false)
      socket.destroy(Object.assign(new Error('read EIO'), { code: 'EIO' }))
      expect(socket.destroyed).toBe(false)
      // A read restarted on that master (a consumer's resume) fails ENOTCONN: the first error held
      // is the one that goes through (node-pty's error listener throws any error but EIO).
      socket.destroy(Object.assign(new Error('read ENOTCONN'), { code: 'ENOTCONN' }))
      drain.noteChildGone()
      expect(socket.destroyed).toBe(true)
      await new Promise((resolve) => setImmediate(resolve))
      expect(closed).toBe(true)
      expect(errors).toEqual(['EIO'])
    })
  })
})
