import { describe, expect, it, vi } from 'vitest'
import type { HeadlessScreen, ScreenSnapshot } from '../../src/pty-host/headless-screen.js'
import type { HostClient } from '../../src/pty-host/host-client.js'
import { HostSessionStore, PTY_HOST_EXITED_SESSION_MEMORY } from '../../src/pty-host/host-sessions.js'
import type { ScreenScheduler } from '../../src/pty-host/screen-cursor.js'
import { PTY_HOST_ACK_HIGH_WATERMARK_CHARS, PTY_HOST_ACK_LOW_WATERMARK_CHARS } from '../../src/pty-host/session-flow.js'
import type { NodePtyProvider } from '../../src/node-pty/index.js'

class NullScreen implements HeadlessScreen {
  write(): void {}
  resize(): void {}
  clear(): void {}
  snapshot(): Promise<ScreenSnapshot> {
    return Promise.resolve({ data: '', cols: 10, rows: 2 })
  }
  heldBytes(): number {
    return 0
  }
  dispose(): void {}
}

describe('HostSessionStore', () => {
  it('tells a session’s screen when flow control holds its PTY: quiet while held is not idleness', () => {
    const provider = { pauseProducer: vi.fn(), resumeProducer: vi.fn() } as unknown as NodePtyProvider
    const scheduler: ScreenScheduler = { schedule: () => undefined, forget: () => undefined }
    const store = new HostSessionStore(provider, () => new NullScreen(), scheduler, { limitChars: 1_000, scrollbackRows: 0 })
    const session = store.create('s', 10, 2)
    const client = {}
    session.history.append('x'.repeat(100))
    // The client opts in to acknowledgements and falls a window behind: the host pauses the PTY.
    session.flow.acknowledge(client, 0)
    session.flow.noteSent(client, PTY_HOST_ACK_HIGH_WATERMARK_CHARS + 1)
    expect(provider.pauseProducer).toHaveBeenCalledWith('s')
    const looks = (n: number): number[] => Array.from({ length: n }, () => session.history.screen.quietLooks())
    expect(looks(5)).toEqual([0, 0, 0, 0, 0])
    // The client catches up: the PTY resumes, and quiet looks count from there.
    session.flow.acknowledge(client, PTY_HOST_ACK_HIGH_WATERMARK_CHARS + 1 - PTY_HOST_ACK_LOW_WATERMARK_CHARS + 1)
    expect(provider.resumeProducer).toHaveBeenCalledWith('s')
    expect(looks(3)).toEqual([1, 2, 3])
    store.dropHistory(session)
  })

  it("counts a new subscriber's replay as owed, so its acks of the replay forgive none of the live output after it", () => {
    const { store, session, client, queued } = attachSetup()
    session.history.append('x'.repeat(600))
    store.attach(client, session, null, ATTACHED)
    expect(queued).toEqual([600])
    // Owed before the client's first ack: its app delivers the replay and acknowledges it.
    expect(session.flow.unacknowledged(client)).toBe(600)
    // It begins acknowledging (100 of the replay), 1 000 chars of live output follow, then it
    // acknowledges the rest of the replay: the live output is still owed, all of it.
    session.flow.acknowledge(client, 100)
    session.flow.noteSent(client, 1_000)
    session.flow.acknowledge(client, 500)
    expect(session.flow.unacknowledged(client)).toBe(1_000)
    store.dropHistory(session)
  })

  it('does not count the replay of a client that was already subscribed: it was sent that output live, and its app drops the replay as overlap', () => {
    const { store, session, client, queued } = attachSetup()
    store.attach(client, session, 'live', ATTACHED)
    session.flow.acknowledge(client, 0)
    // Live output sent to it (and counted), then it re-attaches on the same connection from
    // before that output: the replay repeats what it was sent.
    session.history.append('x'.repeat(600))
    session.flow.noteSent(client, 600)
    store.attach(client, session, 0, ATTACHED)
    expect(queued).toEqual([600])
    expect(session.flow.unacknowledged(client)).toBe(600)
    store.dropHistory(session)
  })
})

const ATTACHED = (): never => ({ v: 1, type: 'attached' }) as never

/** A store and a stand-in client that records the output queued for it. */
function storeWithClient(): { store: HostSessionStore; client: HostClient; queued: number[] } {
  const provider = { pauseProducer: vi.fn(), resumeProducer: vi.fn(), getSize: () => ({ cols: 10, rows: 2 }), getPid: () => 42 } as unknown as NodePtyProvider
  const scheduler: ScreenScheduler = { schedule: () => undefined, forget: () => undefined }
  const store = new HostSessionStore(provider, () => new NullScreen(), scheduler, { limitChars: 1_000, scrollbackRows: 0 })
  const queued: number[] = []
  const client = {
    subscriptions: new Set<string>(),
    send: () => undefined,
    queueOutput: (_id: string, data: string) => void queued.push(data.length),
    flushOutput: () => undefined,
  } as unknown as HostClient
  return { store, client, queued }
}

/** {@link storeWithClient} with one session. */
function attachSetup(): { store: HostSessionStore; session: ReturnType<HostSessionStore['create']>; client: HostClient; queued: number[] } {
  const { store, client, queued } = storeWithClient()
  return { store, session: store.create('s', 10, 2), client, queued }
}

// An app that stays connected to its pty host for days spawns and ends PTYs continuously over one
// connection. The host's record of which sessions that connection follows must not keep an id for
// every session it ever followed: a session the host has forgotten (past its exited-session memory,
// or replaced by a new session under the same id) is no longer followed.
describe("a connection's subscriptions over many session lifecycles", () => {
  it('hold no id of a session the host forgot past its exited-session memory', () => {
    const { store, client } = storeWithClient()
    const lifecycles = PTY_HOST_EXITED_SESSION_MEMORY * 4
    for (let i = 0; i < lifecycles; i++) {
      const session = store.create(`pty-${i}`, 10, 2)
      store.subscribe(client, session)
      store.onExit({ id: session.id, code: 0 })
    }
    expect(store.exited.size).toBe(PTY_HOST_EXITED_SESSION_MEMORY)
    expect(client.subscriptions.size).toBeLessThanOrEqual(PTY_HOST_EXITED_SESSION_MEMORY)
    expect(client.subscriptions.has(`pty-${lifecycles - 1}`)).toBe(true)
    expect(client.subscriptions.has('pty-0')).toBe(false)
  })

  it('hold no id of an ended session replaced under the same id that the connection does not follow', () => {
    const { store, client } = storeWithClient()
    const first = store.create('agent', 10, 2)
    store.subscribe(client, first)
    store.onExit({ id: 'agent', code: 0 })
    // Another app respawns the id; this connection does not subscribe to the new session.
    store.create('agent', 10, 2)
    expect(client.subscriptions.has('agent')).toBe(false)
  })
})
