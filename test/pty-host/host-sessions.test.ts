import { describe, expect, it, vi } from 'vitest'
import type { HeadlessScreen, ScreenSnapshot } from '../../src/pty-host/headless-screen.js'
import type { HostClient } from '../../src/pty-host/host-client.js'
import { HostSessionStore } from '../../src/pty-host/host-sessions.js'
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

  it('counts a replay in the acknowledgement debt of a client that acknowledges: its acks of the replay credit nothing else', () => {
    const provider = { pauseProducer: vi.fn(), resumeProducer: vi.fn(), getSize: () => ({ cols: 10, rows: 2 }), getPid: () => 42 } as unknown as NodePtyProvider
    const scheduler: ScreenScheduler = { schedule: () => undefined, forget: () => undefined }
    const store = new HostSessionStore(provider, () => new NullScreen(), scheduler, { limitChars: 1_000, scrollbackRows: 0 })
    const session = store.create('s', 10, 2)
    session.history.append('x'.repeat(600))
    const queued: number[] = []
    const client = {
      subscriptions: new Set<string>(),
      send: () => undefined,
      queueOutput: (_id: string, data: string) => void queued.push(data.length),
      flushOutput: () => undefined,
    } as unknown as HostClient
    // A client that already acknowledges, with 300 chars of this session's output sent and not
    // yet acknowledged, re-attaches on its connection and asks for everything retained.
    session.flow.acknowledge(client, 0)
    session.flow.noteSent(client, 300)
    store.attach(client, session, null, () => ({ v: 1, type: 'attached' }) as never)
    expect(queued).toEqual([600])
    // The 600 replayed chars are owed like any output sent…
    expect(session.flow.unacknowledged(client)).toBe(900)
    // …so acknowledging them leaves the 300 still owed (uncounted, the replay's acks forgave them).
    session.flow.acknowledge(client, 600)
    expect(session.flow.unacknowledged(client)).toBe(300)
    store.dropHistory(session)
  })
})
