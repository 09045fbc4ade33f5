/**
 * A misspelt option of `stopPtyHost`, `startPtyHost` or `launchPtyHost` was ignored and its default
 * used: `stopPtyHost({ sockPath })` stopped the host of the default socket — the one every app
 * that names none shares, with all their sessions — and a host started with `idleExitMS` kept the
 * default idle time. Refused now, as `createPtyHostProvider` refuses one: `invalid_option` naming
 * it and the option it likely misspells, nothing stopped or started.
 */
import { existsSync, readdirSync } from 'node:fs'
import { launchPtyHost, startPtyHost, stopPtyHost, isPtyHostError } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { HOST_FROM_SOURCES, hostFixture, hostPid, isAlive, rawClient, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

const refusal = async (call: () => unknown): Promise<unknown> => {
  try {
    await call()
  } catch (error) {
    return error
  }
  return undefined
}

describe('pty host: an unknown option of the host functions', () => {
  it('stopPtyHost refuses it and stops nothing', async () => {
    const { socketPath } = hostFixture(cleanups)
    launchPtyHost(HOST_FROM_SOURCES, { socketPath, idleExitMs: 60_000 })
    await waitFor(() => (existsSync(socketPath) && hostPid(socketPath) !== null ? true : undefined), 'the host to listen', 15_000)
    const pid = hostPid(socketPath)!
    // (Not `sockPath` here: unchecked, that would stop the default socket's host — not this test's.)
    const refused = await refusal(() => stopPtyHost({ socketPath, timeoutMS: 5_000 } as never))
    expect(isPtyHostError(refused) && [refused.code, refused.option]).toEqual(['invalid_option', 'timeoutMS'])
    expect((refused as Error).message).toContain('did you mean `timeoutMs`?')
    const client = await waitFor(() => rawClient(socketPath).catch(() => undefined), 'a connection', 15_000)
    cleanups.push(async () => client.close())
    expect(await client.request('list', {})).toMatchObject({ ok: true, result: [] })
    expect(isAlive(pid)).toBe(true)
  }, 30_000)

  it('startPtyHost and launchPtyHost refuse it and start nothing', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    // Closed should it start (the check missing), as a test must leave no host behind.
    const started = await refusal(async () => (await startPtyHost({ socketPath, idleExitMS: 10 } as never)).close())
    expect(isPtyHostError(started) && [started.code, started.option]).toEqual(['invalid_option', 'idleExitMS'])
    expect((started as Error).message).toContain('did you mean `idleExitMs`?')
    const launched = await refusal(() => launchPtyHost(HOST_FROM_SOURCES, { socketPath, historyChar: 100 } as never))
    expect(isPtyHostError(launched) && [launched.code, launched.option]).toEqual(['invalid_option', 'historyChar'])
    expect(existsSync(`${socketPath}.lock`)).toBe(false)
    expect(readdirSync(dir)).toEqual([])
  })

  it('startPtyHost refuses a `log` that is no function (where its journal tells of a failed sync), and starts nothing', async () => {
    const { dir, socketPath } = hostFixture(cleanups)
    const started = await refusal(async () => (await startPtyHost({ socketPath, log: 'stderr' } as never)).close())
    expect(isPtyHostError(started) && [started.code, started.option]).toEqual(['invalid_option', 'log'])
    expect((started as Error).message).toContain('`log` option to be a function')
    expect(readdirSync(dir)).toEqual([])
  })
})
