import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { isPtyHostError, PtyHostError, PTY_HOST_MAX_SCREEN_CELLS, startPtyHost, type PtyHostProvider, type PtyHostServer } from 'ptykit/pty-host'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { killHostAndClean, makeSocketDir, providerOn, rawClient } from './pty-host-test-support.js'

/** Pids of processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }
  return pids
}

describe('pty host: one session screen cannot exhaust the host (PTY_HOST_MAX_SCREEN_CELLS)', () => {
  let host: PtyHostServer
  let app: PtyHostProvider
  let cleanup: () => Promise<void>

  beforeAll(async () => {
    const { dir, socketPath } = makeSocketDir()
    host = await startPtyHost({ socketPath, idleExitMs: 60_000 })
    app = providerOn(socketPath, { autoStart: false })
    cleanup = async () => {
      await app.dispose()
      await host.close()
      await killHostAndClean(socketPath, dir)
    }
  })
  afterAll(() => cleanup())

  /** The size the PTY's kernel side reports (`stty size`: rows cols), read through the session. */
  async function ttySize(id: string): Promise<string> {
    const marker = `size-${randomUUID().slice(0, 8)}`
    let output = ''
    const off = app.onData((event) => {
      if (event.id === id) output += event.data
    })
    try {
      await app.write(id, `echo ${marker} $(stty size)\r`)
      return await waitFor(() => new RegExp(`${marker} (\\d+ \\d+)`).exec(output)?.[1], `stty size in ${id}`)
    } finally {
      off()
    }
  }

  it('refuses an oversized spawn with invalid_spawn_option naming the option and value, leaving no session and no process', async () => {
    const marker = `oversized-${randomUUID()}`
    const refused = await app.spawn({ file: '/bin/sh', args: ['-c', `sleep 30 # ${marker}`], cols: 65_535, rows: 65_535 }).then(
      () => null,
      (error: unknown) => error,
    )
    expect(isPtyHostError(refused) && refused.code).toBe('invalid_spawn_option')
    expect(refused).toMatchObject({ option: 'cols', value: 65_535 })
    expect((refused as Error).message).toContain('`cols` option')
    expect((refused as Error).message).toContain('got 65535')
    expect((refused as Error).message).toContain(String(PTY_HOST_MAX_SCREEN_CELLS))
    expect(processesWith(marker)).toEqual([])
    expect(await app.listProcesses()).toEqual([])
    // The host keeps serving this connection: a normal spawn right after works.
    expect(app.connected).toBe(true)
    const { id } = await app.spawn({ file: '/bin/sh', cols: 80, rows: 24 })
    expect(await ttySize(id)).toBe('24 80')
    await app.shutdown(id, { immediate: true })
  })

  it('refuses an oversized resize on the host (the PTY and its screen keep their size) and in the provider before it sends', async () => {
    const { id } = await app.spawn({ file: '/bin/sh', cols: 80, rows: 24 })
    const raw = await rawClient(host.socketPath)
    try {
      const refused = await raw.request('resize', { ptyId: id, cols: 200, rows: 65_535 })
      expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_option', option: 'rows', value: 65_535 } })
      // A resize's size is an argument, worded as every provider's resize refusal (until 7 Dec "the `rows` option").
      expect(String((refused.error as { message: string }).message)).toContain('`rows` argument')
      expect(String((refused.error as { message: string }).message)).toContain('got 65535')
      expect(await ttySize(id)).toBe('24 80')
      expect(await app.getBufferSnapshot(id)).toMatchObject({ cols: 80, rows: 24 })
      // The provider refuses it before sending: a resize is a one-way notify, the host's refusal would be silent.
      let early: unknown = null
      try {
        app.resize(id, 65_535, 65_535)
      } catch (error) {
        early = error
      }
      expect(isPtyHostError(early) && early.code).toBe('invalid_option')
      // A TypeError as every provider's resize refusal, and still a PtyHostError (until 7 Dec an `Error` only).
      expect(early).toBeInstanceOf(TypeError)
      expect(early).toBeInstanceOf(PtyHostError)
      expect((early as Error).message).toContain('got 65535')
      // The same connection and the host carry on: a normal resize right after applies.
      expect(await raw.request('resize', { ptyId: id, cols: 100, rows: 30 })).toMatchObject({ ok: true, result: true })
      expect(raw.closed).toBe(false)
      expect(await ttySize(id)).toBe('30 100')
      expect(await app.getBufferSnapshot(id)).toMatchObject({ cols: 100, rows: 30 })
      expect(app.resize(id, 120, 40)).toBe(true)
      expect(await ttySize(id)).toBe('40 120')
    } finally {
      raw.close()
      await app.shutdown(id, { immediate: true })
    }
  })

  it("the provider checks a resize against the connected host's scrollback (from its welcome), not its own option", async () => {
    // This app's own option would make 100 × 40 a 10 Mi-cell screen; the host keeps 1 000 rows.
    const other = providerOn(host.socketPath, { autoStart: false, scrollbackRows: 100_000 })
    try {
      const { id } = await other.spawn({ file: '/bin/sh', cols: 80, rows: 24 })
      expect(other.resize(id, 100, 40)).toBe(true)
      expect(await other.getBufferSnapshot(id)).toMatchObject({ cols: 100, rows: 40 })
      await other.shutdown(id, { immediate: true })
    } finally {
      await other.dispose()
    }
  })

  it('refuses a host whose scrollback leaves no room for an 80 × 24 screen, naming the option and value', async () => {
    const { dir, socketPath } = makeSocketDir()
    try {
      const refused = await startPtyHost({ socketPath, scrollbackRows: PTY_HOST_MAX_SCREEN_CELLS }).then(
        async (started) => (await started.close(), null),
        (error: unknown) => error,
      )
      expect(isPtyHostError(refused) && refused.code).toBe('invalid_option')
      expect((refused as Error).message).toContain('`scrollbackRows` option')
      expect((refused as Error).message).toContain(String(PTY_HOST_MAX_SCREEN_CELLS))
      // The provider refuses the same option at once, naming it (it passes it to a host it starts,
      // which would otherwise exit with the error where nobody reads it: a bare host_unavailable).
      let early: unknown = null
      try {
        providerOn(socketPath, { scrollbackRows: PTY_HOST_MAX_SCREEN_CELLS })
      } catch (error) {
        early = error
      }
      expect(isPtyHostError(early) && early.code).toBe('invalid_option')
      expect((early as Error).message).toContain('`scrollbackRows` option')
    } finally {
      await killHostAndClean(socketPath, dir)
    }
  })
})
