import { startPtyHost } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { killHostAndClean, makeSocketDir, providerOn, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host: the headless screen parses behind the stream', () => {
  it('a flood longer than the history is not held by the screen; a snapshot afterwards shows the last lines and counts what the screen skipped', async () => {
    const { dir, socketPath } = makeSocketDir()
    // A ring of 4 Ki chars and a background budget of 1 char/s: the screen cannot keep up, so
    // (apart from catching up in the flood's pauses) it must skip what the ring drops.
    const historyChars = 4_096
    const host = await startPtyHost({ socketPath, idleExitMs: 60_000, historyChars, screenCharsPerSecond: 1 })
    cleanups.push(async () => {
      await host.close()
      await killHostAndClean(socketPath, dir)
    })
    const app = providerOn(socketPath, { autoStart: false })
    cleanups.push(() => app.dispose())
    const lines = 150_000
    let received = ''
    app.onData(({ id, data }) => {
      received += data
      app.acknowledgeData(id, data.length)
    })
    const { id } = await app.spawn({ file: '/bin/sh', args: ['-c', `seq 1 ${lines}; echo DONE; exec sleep 60`], cols: 40, rows: 5 })
    await waitFor(() => (received.includes('DONE\r\n') ? true : undefined), 'the whole flood to reach the app', 60_000)
    // Every line arrived, in order: the producer ran to the end.
    const printed = received.split('\r\n').filter((line) => line.length > 0)
    expect(printed.at(-1)).toBe('DONE')
    expect(printed.slice(0, -1)).toEqual(Array.from({ length: lines }, (_, index) => String(index + 1)))

    const snapshot = await app.getBufferSnapshot(id, { scrollbackRows: 0 })
    expect(snapshot).not.toBeNull()
    // Exact: the screen after `seq` chars, `seq` being everything the app received (nothing came since).
    expect(snapshot!.seq).toBe(received.length)
    // Far more output than the ring holds went by unparsed, and the host says how much.
    expect(snapshot!.skippedChars).toBeGreaterThan(received.length / 2)
    expect(snapshot!.skippedChars).toBeLessThanOrEqual(received.length - historyChars)
    // The last lines of output, on the screen.
    const screenText = snapshot!.data.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '\n')
    for (const line of [String(lines - 2), String(lines - 1), String(lines), 'DONE']) expect(screenText).toContain(line)

    // The live stream continues from `seq`: the next output starts right after it.
    await app.write(id, 'z')
    await waitFor(() => (received.length > snapshot!.seq ? true : undefined), 'the echo of a keystroke')
    expect(received.slice(snapshot!.seq)).toBe('z')
  }, 90_000)
})
