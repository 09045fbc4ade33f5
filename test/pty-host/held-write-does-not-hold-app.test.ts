// A write whose bytes the host holds (a program that does not read) is answered only once their
// fate is known. Before, that pending request kept the app's connection ref'd: a CLI script that
// wrote to such a session and returned from its main stayed up until the request timed out
// (`requestTimeoutMs`, 30 s by default). The host now says when it holds a write (`held`), and the
// app stops holding its event loop for that answer.
import { describe, expect, it } from 'vitest'
import { HOST_FROM_SOURCES, hostFixture, runAppToEnd, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('pty host provider: a held write does not hold the app', () => {
  it('a script that writes 8 MB to a program that does not read, then returns from its main, exits long before the request timeout', async () => {
    const { socketPath } = hostFixture(cleanups)
    const requestTimeoutMs = 30_000
    const run = runAppToEnd(cleanups, 'app-writes-to-sleep.ts', [socketPath, JSON.stringify(HOST_FROM_SOURCES), String(requestTimeoutMs)])
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise<'still running'>((resolve) => {
      timer = setTimeout(() => resolve('still running'), 10_000)
    })
    const ended = await Promise.race([run, bound]).finally(() => clearTimeout(timer))
    expect(ended).not.toBe('still running')
    const { code, printed } = ended as Awaited<typeof run>
    expect(code).toBe(0)
    const [spawned, wrote] = printed.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    cleanups.push(async () => {
      try {
        process.kill(spawned!.pid as number, 'SIGKILL')
      } catch {
        // Gone with the host.
      }
    })
    // The write was held (a promise), after a short write the script awaited was answered.
    expect(wrote).toEqual({ first: { kind: 'accepted' }, pending: true })
  }, 60_000)
})
