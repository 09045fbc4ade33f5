// Bad per-call options to the controller from a plain-JavaScript caller (helper-155's audit): an
// options argument that is not an options object — an array included — is refused with the
// method's typed error naming it, on the method's own channel (a rejection for an async method),
// and leaves nothing behind: no PTY spawned, no stop issued, no claim held; the next good call works.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { notAnOptionsObject, outcome } from '../support/bad-input.js'
import { isPtySpawnError } from '../../src/spawn/index.js'
import { createHarness } from './controller-harness.js'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

describe('controller: an options argument that is not an options object', () => {
  it('spawn / spawnTerminal reject with PtySpawnError invalid_spawn_options naming `options`, and spawn nothing', async () => {
    await fc.assert(
      fc.asyncProperty(notAnOptionsObject, fc.constantFrom('spawn', 'spawnTerminal'), async (value, method) => {
        const h = createHarness()
        const result = await outcome(() => h.controller[method](value as never))
        expect(result.how).toBe('rejected')
        expect(isPtySpawnError(result.value)).toBe(true)
        expect(result.value).toMatchObject({ code: 'invalid_spawn_options', option: 'options' })
        expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
        expect(await h.controller.listProcesses()).toEqual([])
        // Usable afterwards.
        const { id } = await h.controller.spawn({ cols: 100, rows: 30 })
        expect(h.provider.getPty(id)).toMatchObject({ cols: 100, rows: 30 })
      }),
      { numRuns: 40 },
    )
  })

  it('stopAndWait / listProcesses / listProcessesWithHostScope reject with a TypeError naming the options, and stop nothing', async () => {
    await fc.assert(
      fc.asyncProperty(notAnOptionsObject, async (value) => {
        const h = createHarness()
        const { id } = await h.controller.spawn({})
        for (const call of [() => h.controller.stopAndWait(id, value as never), () => h.controller.listProcesses(null, value as never), () => h.controller.listProcessesWithHostScope(value as never)]) {
          const result = await outcome(call)
          expect(result.how).toBe('rejected')
          expect(result.value).toBeInstanceOf(TypeError)
          expect((result.value as Error).message).toMatch(/^Expected the (`options` argument|listing options) to be an object, got /)
        }
        expect(h.provider.calls.filter((call) => call.method === 'shutdown')).toEqual([])
        expect(h.controller.hasPty(id)).toBe(true)
      }),
      { numRuns: 40 },
    )
  })
})

/** A near miss of `timeoutMs` or `deadlineMs`: another case, an underscore, a dropped `Ms`, a letter dropped or doubled. */
const misspeltBudgetName = fc
  .tuple(fc.constantFrom('timeoutMs', 'deadlineMs'), fc.constantFrom('upper', 'lower', 'snake', 'noMs', 'drop', 'double'), fc.nat({ max: 6 }))
  .map(([name, how, at]) => {
    switch (how) {
      case 'upper':
        return name.replace(/Ms$/, 'MS')
      case 'lower':
        return name.toLowerCase()
      case 'snake':
        return name.replace(/Ms$/, '_ms')
      case 'noMs':
        return name.slice(0, -2)
      case 'drop':
        return name.slice(0, at + 1) + name.slice(at + 2)
      default:
        return name.slice(0, at + 1) + name[at + 1] + name.slice(at + 1)
    }
  })

describe('controller: a misspelt wait budget (`timeoutMS`) is refused, not ignored for the default wait', () => {
  it('stopAndWait, listProcesses, listProcessesWithHostScope and a terminal handle stop reject naming the option meant; nothing is stopped', async () => {
    await fc.assert(
      fc.asyncProperty(misspeltBudgetName, async (name) => {
        const h = createHarness()
        const terminal = await h.controller.spawnTerminal({})
        const options = { [name]: 1_000 }
        for (const call of [
          () => h.controller.stopAndWait(terminal.id, options as never),
          () => terminal.stop(options as never),
          () => h.controller.listProcesses(null, options as never),
          () => h.controller.listProcessesWithHostScope(options as never),
        ]) {
          const result = await outcome(call)
          expect(result.how).toBe('rejected')
          expect(result.value).toBeInstanceOf(TypeError)
          expect((result.value as Error).message).toMatch(new RegExp(`^Unknown option \`${name}\`: did you mean \`(timeoutMs|deadlineMs)\`\\?`))
        }
        expect(h.provider.calls.filter((call) => call.method === 'shutdown' || call.method === 'listProcesses')).toEqual([])
        expect(h.controller.hasPty(terminal.id)).toBe(true)
        // The option meant works, and other options beside it are not refused.
        await expect(h.run(h.controller.stopAndWait(terminal.id, { timeoutMs: 1_000, keepHistory: false }))).resolves.toBe(true)
      }),
      { numRuns: 40 },
    )
  })
})

describe("controller: a per-call method's misspelt option is refused, not ignored for its default", () => {
  it('write, attach, getCwd, inspectProcess, serializeBuffer, serializeProviderBuffer and output() throw or reject naming the option; nothing is written', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const id = terminal.id
    const calls: [string, string, (options: object) => unknown][] = [
      ['write', 'expectedIncarnationId', (options) => h.controller.write(id, 'x', 'driving', options as never)],
      ['writeWithSettlement', 'expectedIncarnationId', (options) => h.controller.writeWithSettlement(id, 'x', 'driving', options as never)],
      ['attach', 'hostId', (options) => h.controller.attach(id, options as never)],
      ['getCwd', 'of', (options) => h.controller.getCwd(id, options as never)],
      ['inspectProcess', 'scanChildProcesses', (options) => h.controller.inspectProcess(id, options as never)],
      ['serializeBuffer', 'scrollbackRows', (options) => h.controller.serializeBuffer(id, options as never)],
      ['serializeProviderBuffer', 'scrollbackRows', (options) => h.controller.serializeProviderBuffer(id, options as never)],
      ['output', 'maxQueuedChars', (options) => terminal.output(options as never)],
    ]
    const async = new Set(['attach', 'getCwd', 'inspectProcess', 'serializeBuffer', 'serializeProviderBuffer'])
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...calls), fc.constantFrom('lower', 'upper', 'snake', 'drop'), async ([method, option, call], how) => {
        const name =
          how === 'lower' ? option.toLowerCase() : how === 'upper' ? option.toUpperCase() : how === 'snake' ? option.replace(/([A-Z])/g, '_$1').toLowerCase() : option.slice(0, -1)
        if (name === option) return
        const result = await outcome(() => call({ [name]: option === 'of' ? 'leader' : option === 'expectedIncarnationId' || option === 'hostId' ? 'x' : 1 }))
        expect(result.how).toBe(async.has(method) ? 'rejected' : 'threw')
        expect(result.value).toBeInstanceOf(TypeError)
        expect((result.value as Error).message).toMatch(new RegExp(`^Unknown option \`${name}\`: (did you mean \`${option}\`\\?|the known ones are )`))
      }),
    )
    expect(h.provider.calls.filter((call) => call.method === 'write')).toEqual([])
    // The options meant work.
    expect(h.controller.write(id, 'x', 'driving', { expectedIncarnationId: terminal.incarnationId! })).toBe(true)
    await expect(h.controller.serializeBuffer(id, { scrollbackRows: 0 })).resolves.not.toBeNull()
  })
})

describe('controller: retireRejectedPty with arguments that are not evidence', () => {
  it('a stopConfirmed that is not a boolean, or an incarnation that is not one, throws naming it and retires nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything({ withBigInt: true }).filter((value) => typeof value !== 'boolean').map((stopConfirmed) => ({ stopConfirmed, incarnationId: undefined as unknown, argument: 'stopConfirmed' })),
          fc
            .anything({ withBigInt: true })
            .filter((value) => value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 128))
            .map((incarnationId) => ({ stopConfirmed: false as unknown, incarnationId, argument: 'incarnationId' })),
        ),
        async ({ stopConfirmed, incarnationId, argument }) => {
          const h = createHarness()
          const { id } = await h.controller.spawn({})
          expect(() => h.controller.retireRejectedPty(id, stopConfirmed as never, incarnationId as never)).toThrow(new RegExp(`^Expected the \`${argument}\` argument to be `))
          // Nothing was settled: no exit, the PTY still live (a truthy 'false' settled a verified stop).
          await h.settle()
          expect(h.exits()).toEqual([])
          expect(h.controller.hasPty(id)).toBe(true)
        },
      ),
      { numRuns: 60 },
    )
  })
})

describe('controller: a spawn with a malformed slot', () => {
  it.each([[{ key: '' }], [{ key: 5 }], [{ key: 'k', scopeId: '' }], [null], [[]]])('spawn({ slot: %j }) is the pipeline\'s invalid_spawn_options naming the slot, and spawns nothing', async (slot) => {
    const h = createHarness()
    const error = await h.controller.spawn({ slot: slot as never }).catch((caught: unknown) => caught)
    expect(isPtySpawnError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'invalid_spawn_options', option: expect.stringMatching(/^slot/) })
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
  })
})

describe("controller: its refusals are the shape every provider's are (code, option, value)", () => {
  // Before 7 Dec the controller's own checks threw a bare TypeError: a host matching a provider's
  // refusal on `code === 'invalid_option'` missed the same mistake made one layer up.
  it('each malformed argument or option is a TypeError with code invalid_option, naming the option in `option` and the message, the value in `value`', async () => {
    const h = createHarness()
    const terminal = await h.controller.spawnTerminal({})
    const id = terminal.id
    const c = h.controller
    const cases: [string, unknown, () => unknown][] = [
      ['ptyId', 42, () => c.hasPty(42 as never)],
      ['ptyId', '', () => c.kill('')],
      ['data', 7, () => c.write(id, 7 as never, 'driving')],
      ['inputKind', 'typing', () => c.write(id, 'x', 'typing' as never)],
      ['cols', 0, () => c.resize(id, 0, 24)],
      ['of', 'root', () => c.getCwd(id, { of: 'root' as never })],
      ['scopeId', 5, () => c.inventory(5 as never)],
      ['hostId', '', () => c.supportsForegroundProcessEvidence('')],
      ['hostId', 'mars', () => c.listProcesses('mars')],
      ['signal', 'stop', () => c.listProcesses(null, { signal: 'stop' as never })],
      ['includeForegroundProcessEvidence', 'yes', () => c.listProcesses(null, { includeForegroundProcessEvidence: 'yes' as never })],
      ['stopConfirmed', 'false', () => c.retireRejectedPty(id, 'false' as never, undefined)],
      ['serializer', 'fn', () => c.registerRendererSerializer(id, 'fn' as never)],
      ['scrollbackRows', -1, () => c.serializeBuffer(id, { scrollbackRows: -1 })],
      ['slot', { key: '' }, () => c.adoptSlot({ slot: { key: '' } })],
      ['slot', null, () => c.claimSlotCreate(null as never)],
      ['options', 'all', () => c.stopAndWait(id, 'all' as never)],
      ['listener', 3, () => terminal.onData(3 as never)],
      ['maxQueuedChars', 0, () => terminal.output({ maxQueuedChars: 0 })],
    ]
    for (const [option, value, call] of cases) {
      const result = await outcome(call)
      expect(result.how, option).not.toBe('returned')
      expect(result.value, option).toBeInstanceOf(TypeError)
      expect(result.value, option).toMatchObject({ code: 'invalid_option', option, value })
      expect((result.value as Error).message, option).toContain(`\`${option}\``)
    }
    // Nothing was stopped, written or resized by a refused call.
    expect(h.provider.calls.filter((call) => ['write', 'resize', 'shutdown'].includes(call.method))).toEqual([])
    expect(c.hasPty(id)).toBe(true)
  })

  it('a malformed controller option is refused with the same shape, naming it', () => {
    expect(() => createPtyController({ provider: createFakePtyProvider(), flowControl: { mode: 'sometimes' as never } })).toThrow(
      expect.objectContaining({ code: 'invalid_option', option: 'flowControl.mode', value: 'sometimes' }),
    )
  })
})
