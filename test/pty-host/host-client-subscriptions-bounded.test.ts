/**
 * An app that stays connected to its pty host for days spawns and ends PTYs continuously over one
 * connection. The host's record of which sessions that connection follows must not keep an id for
 * every session it ever followed: a session the host has forgotten (past its exited-session memory,
 * or replaced by a new session under the same id) is no longer followed.
 */
import { describe, expect, it, vi } from 'vitest'
import type { HeadlessScreen, ScreenSnapshot } from '../../src/pty-host/headless-screen.js'
import type { HostClient } from '../../src/pty-host/host-client.js'
import { HostSessionStore, PTY_HOST_EXITED_SESSION_MEMORY } from '../../src/pty-host/host-sessions.js'
import type { ScreenScheduler } from '../../src/pty-host/screen-cursor.js'
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

function setup(): { store: HostSessionStore; client: HostClient } {
  const provider = { pauseProducer: vi.fn(), resumeProducer: vi.fn(), getSize: () => ({ cols: 10, rows: 2 }), getPid: () => 42 } as unknown as NodePtyProvider
  const scheduler: ScreenScheduler = { schedule: () => undefined, forget: () => undefined }
  const store = new HostSessionStore(provider, () => new NullScreen(), scheduler, { limitChars: 1_000, scrollbackRows: 0 })
  const client = {
    subscriptions: new Set<string>(),
    send: () => undefined,
    queueOutput: () => undefined,
    flushOutput: () => undefined,
  } as unknown as HostClient
  return { store, client }
}

describe("a connection's subscriptions over many session lifecycles", () => {
  it('hold no id of a session the host forgot past its exited-session memory', () => {
    const { store, client } = setup()
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
    const { store, client } = setup()
    const first = store.create('agent', 10, 2)
    store.subscribe(client, first)
    store.onExit({ id: 'agent', code: 0 })
    // Another app respawns the id; this connection does not subscribe to the new session.
    store.create('agent', 10, 2)
    expect(client.subscriptions.has('agent')).toBe(false)
  })
})
