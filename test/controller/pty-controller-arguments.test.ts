import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPtySpawnError, type PtySpawnError } from 'ptykit/spawn'
import { createHarness } from './controller-harness.js'
import { argumentRefusalOf } from '../support/bad-input.js'
import { isOptionsObject } from '../../src/contracts/known-options.js'

// Programmer errors are TypeErrors naming the argument, never a quiet `false` or a default.
describe('controller argument validation', () => {
  it.each([
    ['kill(123)', (h: ReturnType<typeof createHarness>) => h.controller.kill(123 as never), '`ptyId` argument', '123 (number)'],
    ['kill(null)', (h: ReturnType<typeof createHarness>) => h.controller.kill(null as never), '`ptyId` argument', 'null (null)'],
    ["write(123, 'x')", (h: ReturnType<typeof createHarness>) => h.controller.write(123 as never, 'x', 'driving'), '`ptyId` argument', '123 (number)'],
    ["writeWithSettlement('', 'x')", (h: ReturnType<typeof createHarness>) => h.controller.writeWithSettlement('', 'x', 'driving'), '`ptyId` argument', '"" (string)'],
    ["write(id, 'x', kind, 'opts')", (h: ReturnType<typeof createHarness>) => h.controller.write('a', 'x', 'driving', 'opts' as never), '`options` argument', '"opts" (string)'],
    ['resize(7, 10, 10)', (h: ReturnType<typeof createHarness>) => h.controller.resize(7 as never, 10, 10), '`ptyId` argument', '7 (number)'],
    ['hasPty({})', (h: ReturnType<typeof createHarness>) => h.controller.hasPty({} as never), '`ptyId` argument', '{} (object)'],
    ['acknowledgeData(undefined, 1)', (h: ReturnType<typeof createHarness>) => h.controller.acknowledgeData(undefined as never, 1), '`ptyId` argument', 'undefined (undefined)'],
    // A fraction of a char: a provider that counts whole chars (the pty host) would drop it, and its count never go down.
    ['acknowledgeData(id, 1.5)', (h: ReturnType<typeof createHarness>) => h.controller.acknowledgeData('a', 1.5), '`chars` argument to be a non-negative integer', '1.5 (number)'],
    ["write(id, 'x', kind, { expectedIncarnationId: 5 })", (h: ReturnType<typeof createHarness>) => h.controller.write('a', 'x', 'driving', { expectedIncarnationId: 5 as never }), '`expectedIncarnationId` option', '5 (number)'],
    ['inventory(42)', (h: ReturnType<typeof createHarness>) => h.controller.inventory(42 as never), '`scopeId` argument', '42 (number)'],
    ['inventory({ scopeId })', (h: ReturnType<typeof createHarness>) => h.controller.inventory({ scopeId: 's' } as never), '`scopeId` argument', '{"scopeId":"s"} (object)'],
  ])('%s throws a TypeError naming the argument and the value', (_name, call, argument, value) => {
    const h = createHarness()
    expect(() => call(h)).toThrow(TypeError)
    expect(() => call(h)).toThrow(argument)
    expect(() => call(h)).toThrow(value)
  })

  it.each([
    ["stopAndWait(id, 'fast')", 'fast', 'Expected the `options` argument to be an object, got "fast" (string)'],
    ['stopAndWait(id, null)', null, 'Expected the `options` argument to be an object, got null (null)'],
    ['stopAndWait(id, { deadlineMs: null })', { deadlineMs: null }, 'Expected the `deadlineMs` option to be a finite absolute epoch time in milliseconds (for example Date.now() + 5000), got null (null)'],
    ["stopAndWait(id, { deadlineMs: '5' })", { deadlineMs: '5' }, 'Expected the `deadlineMs` option to be a finite absolute epoch time in milliseconds (for example Date.now() + 5000), got "5" (string)'],
  ])('%s rejects with a TypeError, and stops nothing', async (_name, options, message) => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    // A wait budget's refusal is also typed (code, option, value: the shared check's, since 7 Dec); the bag's is the controller's own.
    const refused = await h.controller.stopAndWait(id, options as never).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TypeError)
    expect((refused as Error).message).toBe(message)
    if (isOptionsObject(options)) expect(refused).toMatchObject({ code: 'invalid_option', option: 'deadlineMs', value: options.deadlineMs })
    expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toEqual([])
    expect(h.controller.hasPty(id)).toBe(true)
  })

  // An option nobody reads, refused naming it (until the thirty-first session only near misses of the
  // wait budget's names were): `{ expectedIncarnationId }` — a fence `stopAndWait` does not take —
  // stopped whatever held the id, and a misspelt `includeForegroundProcessEvidence` listed no evidence.
  it.each([
    ['stopAndWait', { expectedIncarnationId: 'inc-1' }, 'expectedIncarnationId', 'inc-1'],
    ['stopAndWait', { keepHistroy: true }, 'keepHistroy', true],
    ['listProcesses', { includeForegroundEvidence: true }, 'includeForegroundEvidence', true],
    ['listProcessesWithHostScope', { singal: null }, 'singal', null],
  ] as const)('%s(%o) rejects an option nobody reads, naming it, and stops nothing', async (method, options, option, value) => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const call = method === 'stopAndWait' ? h.controller.stopAndWait(id, options as never) : method === 'listProcesses' ? h.controller.listProcesses(undefined, options as never) : h.controller.listProcessesWithHostScope(options as never)
    const refused = await Promise.resolve(call).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TypeError)
    expect(refused).toMatchObject({ code: 'invalid_option', option, value })
    expect((refused as Error).message).toContain(`\`${option}\``)
    expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toEqual([])
    expect(h.controller.hasPty(id)).toBe(true)
  })

  it.each([
    ['confirmForegroundProcess(42)', (h: ReturnType<typeof createHarness>) => h.controller.confirmForegroundProcess(42 as never), '`ptyId` argument'],
    ['confirmShellForeground()', (h: ReturnType<typeof createHarness>) => h.controller.confirmShellForeground(undefined as never), '`ptyId` argument'],
    ['resetInputModes({})', (h: ReturnType<typeof createHarness>) => h.controller.resetInputModes({} as never), '`ptyId` argument'],
    ['supportsForegroundProcessEvidence(42)', (h: ReturnType<typeof createHarness>) => h.controller.supportsForegroundProcessEvidence(42 as never), '`hostId` argument'],
    ["inspectProcess(id, { scanChildProcesses: 'yes' })", (h: ReturnType<typeof createHarness>) => h.controller.inspectProcess('a', { scanChildProcesses: 'yes' as never }), '`scanChildProcesses` option'],
  ])('%s rejects with a TypeError naming it, not a quiet null or false', async (_name, call, argument) => {
    const h = createHarness()
    await expect(call(h)).rejects.toThrow(TypeError)
    await expect(call(h)).rejects.toThrow(argument)
  })

  it('stopAndWait(123) rejects naming `ptyId`', async () => {
    const h = createHarness()
    await expect(h.controller.stopAndWait(123 as never)).rejects.toThrow('`ptyId` argument')
  })

  it.each([
    ['A\uD800B', 1, 'D800'],
    ['\uDC00', 0, 'DC00'],
    ['ok\uD83D', 2, 'D83D'],
  ])('a write with a lone surrogate (%j) is refused, naming the index; nothing is written', async (data, index, unit) => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    const message = `Expected the \`data\` argument to be well-formed UTF-16, got a lone surrogate U+${unit} at index ${index}`
    expect(() => h.controller.write(id, data, 'driving')).toThrow(argumentRefusalOf(message, 'data', data))
    expect(() => h.controller.writeWithSettlement(id, data, 'driving')).toThrow(argumentRefusalOf(message, 'data', data))
    expect(h.provider.calls.filter((call) => call.method === 'write')).toEqual([])
    // A whole pair is fine.
    expect(h.controller.write(id, 'A\uD83D\uDE00B', 'driving')).toBe(true)
  })

  it('a spawn whose launch text holds a lone surrogate is refused naming the option, before anything starts', async () => {
    // The program would get U+FFFD in its place (the helper-97 review: a startup `command` was
    // sent altered while `write` refused the same text).
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('file', 'command', 'cwd', 'args', 'envValue', 'envName'),
        fc.constantFrom('\uD800', '\uDC00', 'x\uD83D'),
        fc.nat(3),
        async (where, lone, argIndex) => {
          const h = createHarness()
          const args = Array.from({ length: argIndex + 1 }, (_, index) => (index === argIndex && where === 'args' ? lone : 'ok'))
          const options =
            where === 'file' ? { file: lone } : where === 'command' ? { command: `echo ${lone}` } : where === 'cwd' ? { cwd: `/tmp/${lone}` } : where === 'args' ? { args }
            : where === 'envValue' ? { env: { A: lone } } : { env: { [`B${lone}`]: '1' } }
          const option = where === 'args' ? `args[${argIndex}]` : where === 'envValue' ? 'env.A' : where === 'envName' ? `env.B${lone}` : where
          const failure = await h.controller.spawn(options).catch((error: unknown) => error)
          expect(isPtySpawnError(failure) && failure.code).toBe('invalid_spawn_options')
          expect((failure as PtySpawnError).option).toBe(option)
          expect((failure as Error).message).toContain('lone surrogate')
          expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
        },
      ),
      { numRuns: 40 },
    )
    // A whole pair is fine.
    const h = createHarness()
    await expect(h.controller.spawn({ command: 'echo \uD83D\uDE00', args: ['\uD83D\uDE00'] })).resolves.toMatchObject({ isReattach: false })
  })

  it("the lone-surrogate check reads an env's own enumerable string keys only, as Object.entries does", async () => {
    const lone = '\uD800'
    const inherited = Object.create({ INHERITED: lone }) as Record<string, string>
    const hidden = Object.defineProperty({ A: 'ok' }, 'HIDDEN', { value: lone, enumerable: false })
    const bare = Object.assign(Object.create(null) as Record<string, string>, { B: lone })
    const withSymbol = { C: 'ok', [Symbol('s')]: lone }
    const h = createHarness()
    // Not own, not enumerable, or not a string key: not part of the environment, not refused.
    for (const env of [inherited, hidden, withSymbol]) {
      await expect(h.controller.spawn({ env: env as never })).resolves.toMatchObject({ isReattach: false })
    }
    // An object without a prototype is read like any other.
    const failure = await h.controller.spawn({ env: bare }).catch((error: unknown) => error)
    expect(isPtySpawnError(failure) && [failure.code, failure.option]).toEqual(['invalid_spawn_options', 'env.B'])
  })

  // Renderer views and snapshots: a late call from a view (unmounted, disposed) answers
  // harmlessly, but a malformed one is the caller's bug, live or disposed.
  it.each([false, true])('renderer serializer and snapshot calls check their arguments (disposed: %s)', async (disposed) => {
    const h = createHarness()
    const { id } = await h.controller.spawn({})
    if (disposed) await h.run(h.controller.dispose())
    const c = h.controller
    await expect(c.waitForRendererSerializer(id, 0, 1_000, 'stop' as never)).rejects.toThrow(
      argumentRefusalOf('Expected the `signal` option to be an AbortSignal, got "stop" (string)', 'signal', 'stop'),
    )
    await expect(c.waitForRendererSerializer(undefined as never, 0)).rejects.toThrow('`ptyId` argument')
    expect(() => c.hasRendererSerializer(42 as never)).toThrow('Expected the `ptyId` argument to be a non-empty string, got 42 (number)')
    expect(() => c.getRendererSerializerGeneration('' as never)).toThrow('`ptyId` argument')
    await expect(c.serializeBuffer(null as never)).rejects.toThrow('`ptyId` argument')
    await expect(c.serializeBuffer(id, 'all' as never)).rejects.toThrow('Expected the `options` argument to be an object, got "all" (string)')
    await expect(c.serializeBuffer(id, { scrollbackRows: -1 })).rejects.toThrow(
      argumentRefusalOf('Expected the `scrollbackRows` option to be a non-negative integer, got -1 (number)', 'scrollbackRows', -1),
    )
    await expect(c.serializeProviderBuffer(id, { scrollbackRows: 'all' as never })).rejects.toThrow('`scrollbackRows` option')
  })

  it('spawn options that are not an object are refused as invalid_spawn_options naming them; attach options as a TypeError', async () => {
    const h = createHarness()
    // Before: a bare TypeError "Cannot read properties of null (reading 'slot')".
    for (const spawn of [() => h.controller.spawn(null as never), () => h.controller.spawnTerminal(null as never), () => h.controller.spawn(42 as never)]) {
      await expect(spawn()).rejects.toMatchObject({ code: 'invalid_spawn_options', option: 'options', message: expect.stringMatching(/the spawn options to be an object/) })
    }
    await expect(h.controller.attach('p', null as never)).rejects.toThrow(argumentRefusalOf('Expected the `options` argument to be an object, got null (null)', 'options', null))
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
  })

  // A host ported from the seed, whose provider `attach(id)` became `spawn({ sessionId, attachOnly })`:
  // given to the controller's spawn, the attach options were ignored and a process was started
  // where the caller asked never to start one.
  it.each([{ attachOnly: true }, { expectedIncarnationId: 'inc-1' }])('a provider attach option given to spawn (%j) is refused naming it, and nothing starts', async (extra) => {
    const h = createHarness()
    const failure = await h.controller.spawn({ sessionId: 'nope', ...extra } as never).catch((error: unknown) => error)
    const [option] = Object.keys(extra)
    expect(isPtySpawnError(failure) && [failure.code, failure.option]).toEqual(['invalid_spawn_options', option])
    expect((failure as Error).message).toMatch(/controller\.attach\(id\)/)
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
    expect(h.controller.hasPty('nope')).toBe(false)
  })
})
