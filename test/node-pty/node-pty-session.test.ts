import { EventEmitter } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { toPtyIncarnationId } from '../../src/contracts/index.js'
import type { NodePtyTerminal } from '../../src/node-pty/node-pty-module.js'
import { NodePtySession, type NodePtySessionHooks } from '../../src/node-pty/node-pty-session.js'

// A plain file stands in for the PTY's slave side (the drain only opens and writes it).
const dir = mkdtempSync(join(tmpdir(), 'ptykit-session-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

/** A session over a stand-in terminal whose OS looks are counted and scripted. */
function sessionOver(os: { gone: boolean; reaped: boolean }, command?: string) {
  const ptsName = join(dir, `pts-${(files += 1)}`)
  writeFileSync(ptsName, '')
  const socket = new EventEmitter() as EventEmitter & { destroy: () => void }
  socket.destroy = () => {}
  let onExit: ((event: { exitCode: number }) => void) | null = null
  let onData: ((chunk: string) => void) | null = null
  const written: string[] = []
  const terminal = {
    pid: 4242,
    cols: 80,
    rows: 24,
    ptsName,
    _socket: socket,
    onData: (listener: (chunk: string) => void) => {
      onData = listener
      return { dispose() {} }
    },
    onExit: (listener: (event: { exitCode: number }) => void) => {
      onExit = listener
      return { dispose() {} }
    },
    write(data: string) {
      written.push(data)
    },
    resize() {},
    pause() {},
    resume() {},
    kill() {},
  }
  const looks = { thorough: 0, cheap: 0 }
  const delivered: string[] = []
  const hooks: NodePtySessionHooks = {
    emitData: (event) => {
      delivered.push(event.data)
    },
    emitBytes: () => {},
    emitExit: () => {},
    onEnded: () => {},
    isLeaderGone: () => {
      looks.thorough += 1
      return os.gone
    },
    isLeaderReaped: () => {
      looks.cheap += 1
      return os.reaped
    },
  }
  const session = new NodePtySession(
    {
      id: `s${files}`,
      incarnationId: toPtyIncarnationId(`i${files}`),
      terminal: terminal as unknown as NodePtyTerminal,
      file: '/bin/sh',
      drainOutputAtExit: true,
      hostReportsChildExitStatus: true,
      command,
      scopeId: undefined,
      slotKey: undefined,
      claimKey: undefined,
      leaderStartTime: null,
    },
    hooks,
  )
  // node-pty's exit: releases the drain's fd and timers.
  ended.push(() => onExit?.({ exitCode: 0 }))
  const output = (chunk: string) => onData?.(chunk)
  return { session, socket, terminal: terminal as typeof terminal & { _boundClose?: boolean }, looks, written, delivered, output }
}

const ended: Array<() => void> = []
afterEach(() => {
  for (const end of ended.splice(0)) end()
})

describe('NodePtySession: proving the leader gone', () => {
  it('takes node-pty’s own exit callback (it reaped the pid) as proof, without looking at the OS', () => {
    const { session, socket, terminal, looks } = sessionOver({ gone: false, reaped: false })
    // What node-pty's onexit does: mark _boundClose, then wait for the socket's close.
    terminal._boundClose = true
    socket.once('close', () => {})
    expect(session.leaderGone).toBe(true)
    expect(session.drainState).toBe('marking')
    expect(looks).toEqual({ thorough: 0, cheap: 0 })
    session.checkLeader()
    expect(looks).toEqual({ thorough: 0, cheap: 0 })
  })

  it('treats any other close subscription as a mere hint and confirms it from the OS', () => {
    const { session, socket, looks } = sessionOver({ gone: false, reaped: false })
    socket.once('close', () => {})
    // The pid is not free: the thorough look decides.
    expect(looks).toEqual({ thorough: 1, cheap: 1 })
    expect(session.leaderGone).toBe(false)
    expect(session.drainState).toBe('watching')
  })

  it('a hint while the pid is free (node-pty’s waitpid thread reaped it) proves the leader gone without reading /proc', () => {
    // The usual end: the master's stream ended because the leader died, and its reap is not yet
    // reported to JavaScript. One cheap look settles it (issue 18: every exit used to wait for the report).
    const { session, socket, looks } = sessionOver({ gone: true, reaped: true })
    socket.once('close', () => {})
    expect(looks).toEqual({ thorough: 0, cheap: 1 })
    expect(session.leaderGone).toBe(true)
    expect(session.drainState).toBe('marking')
  })

  it('looks cheaply when asked to (SIGCHLD) and thoroughly by default (the poll)', () => {
    const os = { gone: true, reaped: false }
    const { session, looks } = sessionOver(os)
    // A zombie: gone for the thorough look, not yet reaped for the cheap one.
    session.checkLeader(false)
    expect(looks).toEqual({ thorough: 0, cheap: 1 })
    expect(session.leaderGone).toBe(false)
    session.checkLeader()
    expect(looks).toEqual({ thorough: 1, cheap: 1 })
    expect(session.leaderGone).toBe(true)
    expect(session.drainState).toBe('marking')
    session.checkLeader(false)
    expect(looks).toEqual({ thorough: 1, cheap: 1 })
  })

  it('the look by reap reads nothing on node-pty’s terminal: a reported reap is the proof, an unreported one leaves the pid to the leader', () => {
    const { session, terminal, looks } = sessionOver({ gone: true, reaped: true })
    // node-pty's terminal before its exit callback ran (the stop loop asks only when a fresh table
    // showed the leader alive as the process it learnt).
    Object.assign(terminal, { _boundClose: false, _emittedClose: false })
    session.checkLeaderByReap()
    expect(looks).toEqual({ thorough: 0, cheap: 0 })
    expect(session.leaderGone).toBe(false)
    terminal._boundClose = true // the exit callback ran: its waitpid returned
    session.checkLeaderByReap()
    expect(looks).toEqual({ thorough: 0, cheap: 0 })
    expect(session.leaderGone).toBe(true)
  })

  it('the look by reap looks thoroughly at a terminal without node-pty’s close bookkeeping (a stand-in)', () => {
    const { session, terminal, looks } = sessionOver({ gone: true, reaped: false })
    terminal._boundClose = false // a copied field alone is not node-pty's terminal
    session.checkLeaderByReap()
    expect(looks).toEqual({ thorough: 1, cheap: 0 })
    expect(session.leaderGone).toBe(true)
  })

  it('a reaped pid found by the cheap look starts the drain', () => {
    const { session, looks } = sessionOver({ gone: false, reaped: true })
    session.checkLeader(false)
    expect(looks).toEqual({ thorough: 0, cheap: 1 })
    expect(session.leaderGone).toBe(true)
    expect(session.drainState).toBe('marking')
  })
})

describe('NodePtySession: output and input', () => {
  it('delivers what node-pty reads through the drain, in order, counting chars', () => {
    const { session, delivered, output } = sessionOver({ gone: false, reaped: false })
    output('hello ')
    output('world')
    expect(delivered).toEqual(['hello ', 'world'])
    expect(session.charsEmitted).toBe(11)
  })

  it('writes straight through when no launch command waits', () => {
    const { session, written } = sessionOver({ gone: false, reaped: false })
    expect(session.write('ls\r')).toEqual({ kind: 'accepted' })
    expect(written).toEqual(['ls\r'])
  })

  it('queues writes behind a waiting launch command and sends them after it, in order, once the shell prints', async () => {
    const { session, written, output } = sessionOver({ gone: false, reaped: false }, 'echo start')
    // Settled once they went out behind the command (a promise each until then).
    const queued = [session.write('one\r'), session.write('two\r')]
    expect(queued[0]).toBeInstanceOf(Promise)
    expect(written).toEqual([])
    output('$ ')
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(written).toEqual(['echo start\r', 'one\r', 'two\r'])
    expect(await Promise.all(queued)).toEqual([{ kind: 'accepted' }, { kind: 'accepted' }])
    expect(session.write('three\r')).toEqual({ kind: 'accepted' })
    expect(written).toEqual(['echo start\r', 'one\r', 'two\r', 'three\r'])
  })
})
