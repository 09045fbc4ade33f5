// The JSON-lines provider of examples/custom-provider.ts, tested the way a provider author tests
// their own: the conformance suite from `ptykit/testing`, then what is specific to this provider —
// a lossy wire (bare codes), a host that can die, typed absences across the wire.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { exitCauseFromWire } from 'ptykit/exit-cause'
import { isPtyAbsentError } from 'ptykit/spawn'
import type { ProviderSpawnOptions } from 'ptykit/contracts'
import { describePtyProviderConformance } from 'ptykit/testing'
import { nodeArgsFor } from '../test/support/node-entry-bundle.js'
import { createJsonLinesPtyProvider, isJsonLinesHostError, type JsonLinesHostCommand, type JsonLinesPtyProvider } from './custom-provider.js'

// Every test starts its own host child (a provider owns one), from one bundle of the host's sources
// built for this file, rather than through tsx per start (the default command, which
// `npm run examples` runs). Same sources, same protocol; about a second less CPU per host.
const HOST_COMMAND: JsonLinesHostCommand = {
  file: process.execPath,
  args: nodeArgsFor(fileURLToPath(new URL('./json-lines-host/host.ts', import.meta.url))),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
}

// Real processes, as for the node-pty provider: `sh -c` for echoes and exit codes, `cat` for a
// process that runs (and reads its input) until it is stopped.
describePtyProviderConformance('json-lines host provider', () => createJsonLinesPtyProvider({ hostCommand: HOST_COMMAND }), {
  spawnEcho: (text) => ({ file: '/bin/sh', args: ['-c', `printf '%s\\n' '${text}'`] }),
  spawnLongRunning: () => ({ file: 'cat' }),
  spawnExit: (code) => ({ file: '/bin/sh', args: ['-c', `exit ${code}`] }),
  // Its spawn refuses a misspelt option with `assertNoMisspeltSpawnOption`, as the bundled providers do.
  capabilities: { refusesMisspeltSpawnOptions: true },
})

/** How long a test waits for something the host does on its own (a death, an exit). */
const WAIT_MS = 5_000

/** How often a waiting test looks again. */
const POLL_MS = 10

async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

// A zombie counts as dead: it no longer runs, and reaping it is its new parent's business (a
// container's init may reap late).
function isProcessAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    // No /proc (macOS), or the process is gone.
  }
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const providers: JsonLinesPtyProvider[] = []
function makeProvider(): JsonLinesPtyProvider {
  const provider = createJsonLinesPtyProvider({ hostCommand: HOST_COMMAND })
  providers.push(provider)
  return provider
}

afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.dispose()))
})

describe('json-lines host provider: a wire that forwards only a code', () => {
  it('sends exits without a cause, so exitCauseFromWire reads 0 as cause_unreported and 3 as exited(3)', async () => {
    const provider = makeProvider()
    const exits = new Map<string, { code: number; cause?: unknown }>()
    provider.onExit((event) => exits.set(event.id, event))
    const zero = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    const three = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exit 3'] })
    await waitUntil(() => exits.has(zero.id) && exits.has(three.id), 'both exits')
    expect(exits.get(zero.id)).not.toHaveProperty('cause')
    expect(exits.get(three.id)).not.toHaveProperty('cause')
    expect(exitCauseFromWire({ code: exits.get(zero.id)?.code ?? Number.NaN })).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
    expect(exitCauseFromWire({ code: exits.get(three.id)?.code ?? Number.NaN })).toEqual({ kind: 'exited', exitCode: 3 })
  })

  it('through the controller: exit 0 is unknown/cause_unreported, exit 3 is exited(3), a stop is operator_close', async () => {
    const provider = makeProvider()
    const controller = createPtyController({ provider })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const zero = await controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 0'] })
    const three = await controller.spawn({ file: '/bin/sh', args: ['-c', 'exit 3'] })
    const cat = await controller.spawn({ file: 'cat' })
    await waitUntil(() => exits.length === 2, 'the two shells to exit')
    expect(await controller.stopAndWait(cat.id, { timeoutMs: WAIT_MS })).toBe(true)
    const causeOf = (id: string): unknown => exits.find((exit) => exit.ptyId === id)?.cause
    expect(causeOf(zero.id)).toEqual({ kind: 'unknown', reason: 'cause_unreported' })
    expect(causeOf(three.id)).toEqual({ kind: 'exited', exitCode: 3 })
    expect(causeOf(cat.id)).toEqual({ kind: 'operator_close' })
    await controller.dispose()
  })
})

// A scripted stand-in for the host: answers a spawn with its reply, output and exit in one write
// (plus a line of garbage), the way a fast `exit 0` can arrive. Deterministic, unlike a real shell.
const SCRIPTED_HOST = `
const lines = require('node:readline').createInterface({ input: process.stdin })
lines.on('line', (line) => {
  const request = JSON.parse(line)
  const reply = (result) => ({ type: 'reply', id: request.id, ok: true, result })
  const messages = request.method !== 'spawn'
    ? [reply(request.method === 'list' ? [] : null)]
    : [
        { type: 'committed', requestId: request.id },
        reply({ id: 'scripted', incarnationId: 'incarnation-1', pid: null }),
        'not a protocol line',
        { type: 'data', ptyId: 'scripted', data: 'bye\\r\\n', incarnationId: 'incarnation-1' },
        { type: 'exit', ptyId: 'scripted', code: 0, incarnationId: 'incarnation-1' },
      ]
  process.stdout.write(messages.map((message) => JSON.stringify(message) + '\\n').join(''))
})
`

describe('json-lines host provider: ordering across the wire', () => {
  it('lets the spawn’s caller see the reply before the exit that followed it in the same chunk', async () => {
    const provider = createJsonLinesPtyProvider({ hostCommand: { file: process.execPath, args: ['-e', SCRIPTED_HOST] } })
    providers.push(provider)
    const controller = createPtyController({ provider })
    const events: string[] = []
    controller.on('data', (event) => events.push(`data:${event.data}`))
    controller.on('exit', (event) => events.push(`exit:${JSON.stringify(event.cause)}`))

    // Were the exit handed over before the reply's caller had its turn, the spawn pipeline would
    // see an exit before the reply and reject the spawn as `exited_during_start`.
    const reply = await controller.spawn({ file: 'ignored-by-the-script' })
    expect(reply).toMatchObject({ id: 'scripted', incarnationId: 'incarnation-1' })
    await waitUntil(() => events.length === 2, 'the scripted output and exit')
    expect(events).toEqual(['data:bye\r\n', 'exit:{"kind":"unknown","reason":"cause_unreported"}'])
    await controller.dispose()
  })
})

describe('json-lines host provider: a host that dies', () => {
  it('rejects every pending request, answers null (not false) for its PTYs, and leaves no PTY behind', async () => {
    const provider = makeProvider()
    const { id } = await provider.spawn({ file: 'cat' })
    const pid = (await provider.listProcesses()).find((row) => row.id === id)?.pid
    expect(pid).toEqual(expect.any(Number))
    expect(provider.hasPty(id)).toBe(true)

    // Freeze the host so that it cannot answer, send a request, then kill the host.
    const hostPid = provider.hostPid
    expect(hostPid).toEqual(expect.any(Number))
    process.kill(hostPid as number, 'SIGSTOP')
    const pendingListing = provider.listProcesses()
    process.kill(hostPid as number, 'SIGKILL')

    await expect(pendingListing).rejects.toSatisfy((error) => isJsonLinesHostError(error) && error.code === 'host_exited')
    await provider.hostExited
    expect(provider.hostPid).toBeNull()
    expect(provider.hasPty(id)).toBeNull()
    expect(await provider.probeLiveness(id)).toBeNull()
    // Nothing was handed to a dead host: the write is refused, provably.
    expect(await provider.write(id, 'hello\r')).toEqual({ kind: 'refused', reason: 'provider_refused_write' })
    await expect(provider.shutdown(id)).rejects.toSatisfy((error) => isJsonLinesHostError(error) && error.code === 'host_exited')
    await expect(provider.spawn({ file: 'cat' })).rejects.toSatisfy((error) => isJsonLinesHostError(error) && error.code === 'host_exited')

    // The kernel hangs up a PTY whose master side died with its host: `cat` does not outlive it.
    try {
      await waitUntil(() => !isProcessAlive(pid as number), `PTY process ${pid} to die with its host`)
    } finally {
      if (isProcessAlive(pid as number)) process.kill(pid as number, 'SIGKILL')
    }
  })

  it('leaves the controller unable to tell (null), never reporting the PTY dead', async () => {
    const provider = makeProvider()
    const controller = createPtyController({ provider })
    const exits: PtyControllerExitEvent[] = []
    controller.on('exit', (event) => exits.push(event))
    const { id } = await controller.spawn({ file: 'cat' })
    process.kill(provider.hostPid as number, 'SIGKILL')
    await provider.hostExited
    expect(await controller.probePtyLiveness(id)).toBeNull()
    // Nothing was observed to exit: no exit event may claim it did.
    expect(exits).toEqual([])
    await controller.dispose()
  })
})

describe('json-lines host provider: what crosses the wire', () => {
  it('relays an attach-only miss as a typed absence (code pty_absent)', async () => {
    const provider = makeProvider()
    const attach = provider.spawn({ attachOnly: true, sessionId: 'no-such-session' })
    await expect(attach).rejects.toSatisfy(isPtyAbsentError)
  })

  it('relays a refused option as a TypeError, and starts nothing', async () => {
    const provider = makeProvider()
    await expect(provider.spawn({ file: 'cat', cols: 0 })).rejects.toBeInstanceOf(TypeError)
    expect(await provider.listProcesses()).toEqual([])
  })

  // helper-240: used without the controller (whose pipeline refuses such a key first), the provider
  // sent a misspelt option to the host, whose refusal crossed the wire without its `option` and
  // `value` — and a host that had died answered `host_exited` about an option that was wrong anyway.
  it.each([
    [{ file: 'cat', cdw: '/tmp' }, 'cdw', '/tmp', 'cwd'],
    [{ file: 'cat', sessionID: 'tab-1' }, 'sessionID', 'tab-1', 'sessionId'],
    [{ id: 'tab-1' }, 'id', 'tab-1', 'sessionId'],
  ] as Array<[Record<string, unknown>, string, unknown, string]>)('refuses a misspelt spawn option itself (%j), naming it and its value, and starts nothing', async (options, option, value, meant) => {
    const provider = makeProvider()
    const refusal = provider.spawn(options as ProviderSpawnOptions)
    await expect(refusal).rejects.toBeInstanceOf(TypeError)
    await expect(refusal).rejects.toMatchObject({ code: 'invalid_spawn_option', option, value, message: expect.stringContaining(`did you mean \`${meant}\``) })
    expect(await provider.listProcesses()).toEqual([])
  })

  it('refuses a misspelt spawn option before anything crosses the wire (a dead host is not asked), a misspelt `env` without its value', async () => {
    const provider = makeProvider()
    process.kill(provider.hostPid!, 'SIGKILL')
    await provider.hostExited
    await expect(provider.spawn({ file: 'cat', cdw: '/tmp' } as ProviderSpawnOptions)).rejects.toMatchObject({ code: 'invalid_spawn_option', option: 'cdw', value: '/tmp' })
    const secret = provider.spawn({ file: 'cat', evn: { TOKEN: 'secret-value' } } as ProviderSpawnOptions)
    await expect(secret).rejects.toMatchObject({ code: 'invalid_spawn_option', option: 'evn', value: undefined, message: expect.stringContaining('did you mean `env`') })
    await expect(secret).rejects.toSatisfy((error: Error) => !error.message.includes('secret-value'))
  })

  it('calls onPtySpawnCommitted exactly once, before the spawn resolves', async () => {
    const provider = makeProvider()
    const order: string[] = []
    const spawned = provider.spawn({ file: 'cat', onPtySpawnCommitted: () => order.push('committed') })
    const { id } = await spawned
    order.push('resolved')
    expect(order).toEqual(['committed', 'resolved'])
    await provider.shutdown(id, { immediate: true })
  })

  it('stops a process whose commit hook threw, and rejects with the hook’s error', async () => {
    const provider = makeProvider()
    const hookError = new Error('the host app refused this terminal')
    await expect(
      provider.spawn({
        file: 'cat',
        onPtySpawnCommitted: () => {
          throw hookError
        },
      }),
    ).rejects.toBe(hookError)
    expect(await provider.listProcesses()).toEqual([])
  })
})
