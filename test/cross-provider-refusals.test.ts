/**
 * The same bad or failing request through a controller over each provider — the fake (what a host
 * app's tests run on), node-pty, the pty host and SSH (OpenSSH on loopback) — must get the same
 * answer: the same error class at the controller, the same `code`, the same refused option, and a
 * message naming the option and showing the value (an `env` value only as `[redacted]`). A host
 * that switches provider, or tests on the fake, sees what production sees. The few differences are
 * forced by the platform, documented on the provider's page, and pinned here cell by cell
 * (`FORCED`): the fake runs nothing, so it cannot know a program or a directory is missing
 * (docs/testing-with-the-fake-provider.md); SSH applies `env` and `envToDelete` through the
 * remote `sh`, which takes only shell names (docs/ssh-provider.md); the pty host may hold a PTY it has not told this client
 * about, so `hasPty` of an unknown id is `null` (docs/pty-host.md).
 *
 * Until 7 Dec a program or a `cwd` SSH's remote refused was `provider_spawn_failed` (no option
 * named) where the local providers refused the option (`invalid_spawn_options`, `file`/`cwd`); an
 * `env` name SSH refused was named `env.<name>` where the others name `env`, and a bad `args` or
 * `envToDelete` element `args`/`envToDelete` where the others name `args[i]`/`envToDelete[i]`;
 * and the fake started a PTY for an empty `file`, an `args` string, an `env` name holding `=` or a
 * number as an `env` value, every one of which each real provider refuses, and refused a bad
 * `cols`/`rows` with a `TypeError` without the `code` and `option` the real providers' carry.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FakePtyProvider } from 'ptykit/testing'
import { waitFor } from './node-pty/pty-test-support.js'
import { useSshd } from './ssh/ssh-test-support.js'
import { outcome } from './support/bad-input.js'
import { useProviderBench } from './support/provider-bench.js'

const sshd = useSshd()
const kinds = ['fake', 'node-pty', 'pty host', 'ssh'] as const
type Kind = (typeof kinds)[number]

// Loopback: the SSH remote sees the same files as the local providers.
let scratch = ''
let plainFile = ''
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ptykit-refusals-'))
  plainFile = join(scratch, 'not-executable')
  writeFileSync(plainFile, 'echo hi\n')
  chmodSync(plainFile, 0o644)
})
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** One cell of the matrix: how a call settled, and what its error says. */
type Cell =
  | { how: 'returned'; value: unknown }
  | {
      how: 'threw' | 'rejected'
      /** The error's class, as the controller's caller sees it. */
      error: string
      code?: unknown
      option?: unknown
      outcome?: unknown
      /** The provider's error (`cause`) code, when the controller wraps one. */
      causeCode?: unknown
      /** The message names the option (`` `cwd` ``). */
      namesOption?: boolean
      /** The message shows the value (`true`), or only its type (`'redacted'`, a secret). */
      showsValue?: boolean | 'redacted'
    }

/** What the message shows of `value`: as the value (describeValue's form), or redacted. */
function showsValue(message: string, value: unknown): boolean | 'redacted' {
  if (message.includes('[redacted]')) return 'redacted'
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value)
  return message.includes(shown)
}

/** The cells whose error is a `TypeError` (of any subclass): what a provider's refusal of a bad argument is, from every provider. */
const typeErrorCells = new WeakSet<Cell>()

/**
 * A provider's own refusal, its class erased (each provider has its own; the code, option and
 * message agree), but not whether it is a `TypeError` — a programmer error, from every provider.
 * Until 7 Dec the pty host's refusals were a `PtyHostError`, an `Error` and no `TypeError`.
 */
function erasedClass(cell: Cell): string {
  return typeErrorCells.has(cell) ? 'a TypeError of the provider\'s' : 'the provider\'s'
}

/** Settle `call` and describe it as a cell; `option`/`value` are the ones the caller gave, for the message checks. */
async function cellOf(call: () => unknown, named?: { option: string; value: unknown }): Promise<Cell> {
  const result = await outcome(call)
  if (result.how === 'returned') return { how: 'returned', value: result.value }
  const error = result.value as Error & { code?: unknown; option?: unknown; outcome?: unknown; cause?: { code?: unknown } }
  const cell: Cell = { how: result.how, error: error.constructor.name }
  if (error instanceof TypeError) typeErrorCells.add(cell)
  if (error.code !== undefined) cell.code = error.code
  if (error.option !== undefined) cell.option = error.option
  if (error.outcome !== undefined) cell.outcome = error.outcome
  if (error.cause?.code !== undefined) cell.causeCode = error.cause.code
  if (named !== undefined) {
    cell.namesOption = error.message.includes(`\`${named.option}\``)
    cell.showsValue = showsValue(error.message, named.value)
  }
  return cell
}

/** A spawn refused as a bad option: the same at the controller for every provider. */
const refused = (option: string, shown: boolean | 'redacted' = true): Cell => ({
  how: 'rejected',
  error: 'PtySpawnError',
  code: 'invalid_spawn_options',
  option,
  outcome: 'not_started',
  causeCode: 'invalid_spawn_option',
  namesOption: true,
  showsValue: shown,
})
const SPAWNED: Cell = { how: 'returned', value: 'spawned' }

/** A cell that differs on some providers for a reason the platform forces (see the file's head). */
type Expected = Cell | { each: Cell; forced: Partial<Record<Kind, Cell>> }
const cellFor = (expected: Expected, kind: Kind): Cell => ('each' in expected ? (expected.forced[kind] ?? expected.each) : expected)

/** Spawns that must be refused, each with the option it names (and the value the message shows). */
const SPAWNS: Array<{ name: string; options: () => Record<string, unknown>; named: { option: string; value: () => unknown }; expected: Expected }> = [
  // The fake runs nothing and reads no file system: a test scripts a `fail` to play these.
  ...[
    ['a program that does not exist (a path)', () => '/nonexistent/ptykit-program'],
    ['a program that does not exist (a bare name)', () => 'ptykit-no-such-program'],
    ['a program that is not executable', () => plainFile],
    ['a directory as program', () => scratch],
  ].map(([name, file]) => ({
    name: name as string,
    options: () => ({ file: (file as () => string)() }),
    named: { option: 'file', value: file as () => string },
    expected: { each: refused('file'), forced: { fake: SPAWNED } },
  })),
  ...[
    ['a cwd that does not exist', () => '/nonexistent/ptykit-dir'],
    ['a cwd that is a file', () => plainFile],
  ].map(([name, cwd]) => ({
    name: name as string,
    options: () => ({ file: '/bin/sh', cwd: (cwd as () => string)() }),
    named: { option: 'cwd', value: cwd as () => string },
    expected: { each: refused('cwd'), forced: { fake: SPAWNED } },
  })),
  { name: 'an env name holding =', options: () => ({ file: '/bin/sh', env: { 'A=B': 'x' } }), named: { option: 'env', value: () => 'A=B' }, expected: refused('env') },
  { name: 'an empty env name', options: () => ({ file: '/bin/sh', env: { '': 'x' } }), named: { option: 'env', value: () => '' }, expected: refused('env') },
  // An environment holds `A-B`; the remote `sh` that applies SSH's `env` cannot export it.
  { name: 'an env name sh cannot export', options: () => ({ file: '/bin/sh', env: { 'A-B': 'x' } }), named: { option: 'env', value: () => 'A-B' }, expected: { each: SPAWNED, forced: { ssh: refused('env') } } },
  { name: 'an env value that is a number', options: () => ({ file: '/bin/sh', env: { X: 4242 } }), named: { option: 'env.X', value: () => 4242 }, expected: refused('env.X', 'redacted') },
  { name: 'an env value that is null', options: () => ({ file: '/bin/sh', env: { X: null } }), named: { option: 'env.X', value: () => null }, expected: refused('env.X', 'redacted') },
  { name: 'an env that is a string', options: () => ({ file: '/bin/sh', env: 'X=1' }), named: { option: 'env', value: () => 'X=1' }, expected: refused('env', 'redacted') },
  { name: 'args that is a string', options: () => ({ file: '/bin/sh', args: '-c' }), named: { option: 'args', value: () => '-c' }, expected: refused('args') },
  { name: 'an empty file', options: () => ({ file: '' }), named: { option: 'file', value: () => '' }, expected: refused('file') },
  { name: 'an args element that is a number', options: () => ({ file: '/bin/sh', args: ['-c', 5] }), named: { option: 'args[1]', value: () => 5 }, expected: refused('args[1]') },
  { name: 'an envToDelete that is a string', options: () => ({ file: '/bin/sh', envToDelete: 'X' }), named: { option: 'envToDelete', value: () => 'X' }, expected: refused('envToDelete') },
  { name: 'an envToDelete element that is a number', options: () => ({ file: '/bin/sh', envToDelete: ['A', 5] }), named: { option: 'envToDelete[1]', value: () => 5 }, expected: refused('envToDelete[1]') },
  { name: 'an empty envToDelete element', options: () => ({ file: '/bin/sh', envToDelete: [''] }), named: { option: 'envToDelete[0]', value: () => '' }, expected: refused('envToDelete[0]') },
  { name: 'an envToDelete name sh cannot unset', options: () => ({ file: '/bin/sh', envToDelete: ['A-B'] }), named: { option: 'envToDelete[0]', value: () => 'A-B' }, expected: { each: SPAWNED, forced: { ssh: refused('envToDelete[0]') } } },
  { name: 'a command that is a number', options: () => ({ file: '/bin/sh', command: 5 }), named: { option: 'command', value: () => 5 }, expected: refused('command') },
  { name: 'an empty cwd', options: () => ({ file: '/bin/sh', cwd: '' }), named: { option: 'cwd', value: () => '' }, expected: refused('cwd') },
  { name: 'a cwd that is a number', options: () => ({ file: '/bin/sh', cwd: 5 }), named: { option: 'cwd', value: () => 5 }, expected: refused('cwd') },
  { name: 'a file that is a number', options: () => ({ file: 5 }), named: { option: 'file', value: () => 5 }, expected: refused('file') },
  { name: 'a program that does not exist (a relative path)', options: () => ({ file: './ptykit-no-such-program' }), named: { option: 'file', value: () => './ptykit-no-such-program' }, expected: { each: refused('file'), forced: { fake: SPAWNED } } },
  ...(
    [
      ['cols', 0],
      ['rows', 0],
      ['cols', 65_536],
      ['rows', 1_000_000_000],
      ['cols', 1.5],
      ['rows', Number.NaN],
    ] as const
  ).map(([option, value]) => ({
    name: `${option} ${value}`,
    options: () => ({ file: '/bin/sh', [option]: value }),
    named: { option, value: () => value },
    expected: refused(option),
  })),
]

/** A controller over a fresh provider of `kind`, recording exits. */
const useBench = (kind: Kind) => useProviderBench(kind, sshd)

describe.each(kinds)('cross-provider refusals: %s', (kind) => {
  const b = useBench(kind)

  it('bad spawn options and failing launches: one error class, code and option everywhere, the option and the value named', async () => {
    const { controller, hostId } = b()
    const seen: Record<string, Cell> = {}
    const wanted: Record<string, Cell> = {}
    for (const spawn of SPAWNS) {
      const value = spawn.named.value()
      const cell = await cellOf(() => controller.spawn({ hostId, ...spawn.options() } as never), { option: spawn.named.option, value })
      if (cell.how === 'returned') {
        await controller.stopAndWait((cell.value as { id: string }).id, { timeoutMs: 5_000 })
        cell.value = 'spawned'
      }
      seen[spawn.name] = cell
      wanted[spawn.name] = cellFor(spawn.expected, kind)
    }
    expect(seen).toEqual(wanted)
  }, 60_000)

  it('straight to the provider (a host without the controller, a suite on the fake): the same refusals, as invalid_spawn_option naming the option', async () => {
    const { provider } = b()
    const seen: Record<string, Cell> = {}
    const wanted: Record<string, Cell> = {}
    for (const spawn of SPAWNS) {
      const value = spawn.named.value()
      const cell = await cellOf(() => provider.spawn(spawn.options() as never), { option: spawn.named.option, value })
      if (cell.how === 'returned') {
        await provider.shutdown((cell.value as { id: string }).id, { timeoutMs: 5_000 })
        cell.value = 'spawned'
      } else cell.error = 'the provider\'s' // Each provider has its own class; the code, option and message agree.
      seen[spawn.name] = cell
      const expected = cellFor(spawn.expected, kind)
      wanted[spawn.name] =
        expected.how === 'returned'
          ? expected
          : { how: 'rejected', error: 'the provider\'s', code: 'invalid_spawn_option', option: expected.option, namesOption: true, showsValue: expected.showsValue! }
    }
    expect(seen).toEqual(wanted)
  }, 60_000)

  it('a secret env value is never shown, whatever refuses it', async () => {
    const { controller, hostId } = b()
    const error = (await controller.spawn({ hostId, file: '/bin/sh', env: { TOKEN: 987654321 as never } }).catch((caught: unknown) => caught)) as Error
    expect(String(error.message) + String((error.cause as Error | undefined)?.message)).not.toContain('987654321')
    expect(error).toMatchObject({ code: 'invalid_spawn_options', option: 'env.TOKEN', value: undefined })
  })

  it('a duplicate sessionId: a live one is attached to, a fresh one (isNewSession) refused as pty_id_in_use', async () => {
    const { controller, hostId } = b()
    const sleep = { hostId, file: '/bin/sh', args: ['-c', 'sleep 30'], sessionId: `dup-${kind.replace(' ', '-')}` }
    const first = await controller.spawn(sleep)
    expect(first.isReattach).toBe(false)
    const again = await controller.spawn(sleep)
    expect({ isReattach: again.isReattach, incarnationId: again.incarnationId }).toEqual({ isReattach: true, incarnationId: first.incarnationId })
    expect(await cellOf(() => controller.spawn({ ...sleep, isNewSession: true }))).toEqual({
      how: 'rejected',
      error: 'PtySpawnError',
      code: 'provider_spawn_failed',
      outcome: 'not_started',
      causeCode: 'pty_id_in_use',
    })
    expect(controller.hasPty(first.id)).toBe(true)
    expect(await controller.stopAndWait(first.id, { timeoutMs: 5_000 })).toBe(true)
  }, 30_000)

  it('calls about an unknown id, and after an exit: the same answers (no throw) everywhere', async () => {
    const { controller, hostId, exits } = b()
    if (kind === 'fake') (b().provider as FakePtyProvider).scriptNextSpawn({ exit: { exitCode: 3 } })
    const ended = await controller.spawn({ hostId, file: '/bin/sh', args: ['-c', 'exit 3'] })
    await waitFor(() => exits.find((event) => event.ptyId === ended.id), `the exit of ${ended.id}`, 15_000)
    const answers: Record<string, Cell> = {}
    for (const [which, id] of [
      ['unknown', 'ptykit-no-such-pty'],
      ['exited', ended.id],
    ] as const) {
      answers[`write ${which}`] = await cellOf(() => controller.write(id, 'x', 'driving'))
      answers[`writeWithSettlement ${which}`] = await cellOf(() => controller.writeWithSettlement(id, 'x', 'driving'))
      answers[`resize ${which}`] = await cellOf(() => controller.resize(id, 80, 24))
      answers[`kill ${which}`] = await cellOf(() => controller.kill(id))
      answers[`hasPty ${which}`] = await cellOf(() => controller.hasPty(id))
      answers[`probePtyLiveness ${which}`] = await cellOf(() => controller.probePtyLiveness(id))
      // Straight to the provider: the same answers.
      const { provider } = b()
      answers[`provider write ${which}`] = await cellOf(() => provider.write(id, 'x'))
      answers[`provider resize ${which}`] = await cellOf(() => provider.resize(id, 80, 24))
      answers[`provider shutdown ${which}`] = await cellOf(() => provider.shutdown(id, { timeoutMs: 1_000 }))
      answers[`provider hasPty ${which}`] = await cellOf(() => provider.hasPty!(id))
      answers[`provider probeLiveness ${which}`] = await cellOf(() => provider.probeLiveness!(id))
    }
    const returned = (value: unknown): Cell => ({ how: 'returned', value })
    expect(answers).toEqual({
      'write unknown': returned(false),
      'writeWithSettlement unknown': returned({ kind: 'refused', reason: 'pty_not_found' }),
      'resize unknown': returned(false),
      'kill unknown': returned(false),
      // FORCED: the pty host may hold a PTY another client started under that id (docs/pty-host.md).
      'hasPty unknown': returned(kind === 'pty host' ? null : false),
      'probePtyLiveness unknown': returned(false),
      'write exited': returned(false),
      'writeWithSettlement exited': returned({ kind: 'refused', reason: 'pty_exited' }),
      'resize exited': returned(false),
      'kill exited': returned(false),
      'hasPty exited': returned(false),
      'probePtyLiveness exited': returned(false),
      'provider write unknown': returned({ kind: 'refused', reason: 'pty_not_found' }),
      'provider resize unknown': returned(false),
      'provider shutdown unknown': returned(undefined),
      'provider hasPty unknown': returned(kind === 'pty host' ? null : false),
      'provider probeLiveness unknown': returned(false),
      'provider write exited': returned({ kind: 'refused', reason: 'pty_exited' }),
      'provider resize exited': returned(false),
      'provider shutdown exited': returned(undefined),
      'provider hasPty exited': returned(false),
      'provider probeLiveness exited': returned(false),
    })
  }, 30_000)

  it('resize of a live PTY to a bad size, through the controller and straight to the provider: the documented invalid_option naming the argument and the value; a stop given a signal name: a TypeError; the PTY untouched', async () => {
    const { controller, hostId, provider } = b()
    const live = await controller.spawn({ hostId, file: '/bin/sh', args: ['-c', 'sleep 30'], cols: 80, rows: 24 })
    const seen: Record<string, Cell> = {}
    const wanted: Record<string, Cell> = {}
    const expected: Record<string, string | undefined> = {}
    const nouns = new Set<string | undefined>()
    for (const [cols, rows] of [
      [0, 24],
      [-1, 24],
      [1.5, 24],
      [Number.NaN, 24],
      [65_536, 24],
      [1_000_000_000, 24],
      [80, 0],
      [80, -1],
      [80, 2.5],
      [80, Number.NaN],
      [80, 65_536],
      [80, Number.POSITIVE_INFINITY],
    ] as const) {
      const [option, value] = cols === 80 ? ['rows', rows] : ['cols', cols]
      seen[`controller ${cols}x${rows}`] = await cellOf(() => controller.resize(live.id, cols, rows), { option, value })
      wanted[`controller ${cols}x${rows}`] = { how: 'threw', error: 'TypeError', code: 'invalid_option', option, namesOption: true, showsValue: true }
      const direct = await cellOf(() => provider.resize(live.id, cols, rows), { option, value })
      if (direct.how !== 'returned') direct.error = erasedClass(direct)
      // What the message says was expected, and what it calls the size: the controller's words, from every provider.
      const refusal = (await outcome(() => provider.resize(live.id, cols, rows))).value
      expected[`${cols}x${rows}`] = / to be (.*), got /.exec(refusal instanceof Error ? refusal.message : '')?.[1]
      nouns.add(/^Expected the `\w+` (\w+) /.exec(refusal instanceof Error ? refusal.message : '')?.[1])
      seen[`provider ${cols}x${rows}`] = direct
      wanted[`provider ${cols}x${rows}`] = { how: 'threw', error: 'a TypeError of the provider\'s', code: 'invalid_option', option, namesOption: true, showsValue: true }
    }
    // Until 7 Dec: no code from the controller and the fake, `invalid_spawn_option` from node-pty and SSH.
    expect(seen).toEqual(wanted)
    // Until 7 Dec node-pty alone said "a positive integer" (for 0) and "a positive integer of at most 65535".
    expect(new Set(Object.values(expected))).toEqual(new Set(['an integer from 1 to 65535']))
    // Until 7 Dec the fake and the controller said "the `cols` argument", node-pty, the pty host and SSH "the `cols` option".
    expect(nouns).toEqual(new Set(['argument']))
    const typeError: Cell = { how: 'threw', error: 'TypeError', namesOption: true, showsValue: true }
    // No call takes a signal's name: a stop's `signal` is an AbortSignal, and a name there is refused, the PTY left running.
    expect(await cellOf(() => controller.stopAndWait(live.id, { signal: 'SIGTERM' as never, timeoutMs: 5_000 }), { option: 'signal', value: 'SIGTERM' })).toEqual({ ...typeError, how: 'rejected', code: 'invalid_option', option: 'signal' })
    expect(controller.hasPty(live.id)).toBe(true)
    expect(await controller.probePtyLiveness(live.id)).toBe(true)
    expect(controller.resize(live.id, 100, 30)).toBe(true)
    expect(await controller.stopAndWait(live.id, { timeoutMs: 5_000 })).toBe(true)
  }, 30_000)

  // The node-pty and SSH providers have no `acknowledgeData` (no flow control of their own), so
  // nothing below the controller would refuse a bad count over them: the controller's own check,
  // made before it routes to any provider, is what keeps the four alike. The fake and the pty host
  // also refuse it straight to the provider (the provider-level matrix below).
  it('acknowledgeData of a live PTY with a count that is no non-negative integer: invalid_option naming `chars` and the value, through the controller and its terminal handle; the PTY untouched', async () => {
    const { controller, hostId, provider } = b()
    expect(typeof provider.acknowledgeData === 'function').toBe(kind === 'fake' || kind === 'pty host')
    const live = await controller.spawn({ hostId, file: '/bin/sh', args: ['-c', 'sleep 30'] })
    const terminal = controller.terminal(live.id)!
    const seen: Record<string, Cell> = {}
    const wanted: Record<string, Cell> = {}
    for (const bad of [-1, Number.NaN, 1.5, '5', Number.POSITIVE_INFINITY]) {
      const shown = typeof bad === 'string' ? '"5"' : String(bad)
      seen[`controller ${shown}`] = await cellOf(() => controller.acknowledgeData(live.id, bad as never), { option: 'chars', value: bad })
      seen[`terminal ${shown}`] = await cellOf(() => terminal.acknowledgeData(bad as never), { option: 'chars', value: bad })
      for (const via of ['controller', 'terminal']) {
        wanted[`${via} ${shown}`] = { how: 'threw', error: 'TypeError', code: 'invalid_option', option: 'chars', namesOption: true, showsValue: true }
      }
    }
    expect(seen).toEqual(wanted)
    controller.acknowledgeData(live.id, 0)
    expect(await controller.probePtyLiveness(live.id)).toBe(true)
    expect(await controller.stopAndWait(live.id, { timeoutMs: 5_000 })).toBe(true)
  }, 30_000)
})

/**
 * Every public method of a provider, given a malformed argument (a host app or a test suite calling
 * the provider directly): the same typed refusal from the fake, node-pty and the pty host —
 * `code: 'invalid_option'`, the refused `option` and `value`, a message naming the option and
 * showing the value; a method that answers with a promise rejects, the others throw. A method a
 * provider does not have is left out. SSH too: until 7 Dec (later the same day) it named a PTY id
 * `id`, took `''` for an unknown PTY, and ignored unknown listing and `getCwd` options.
 *
 * Until 7 Dec: the pty host answered `null` ("unknown") to `probeLiveness`, `getCwd`,
 * `getForegroundProcess` and `hasChildProcesses` of the id `5`, where node-pty and the fake
 * answered `false`/`null` — every one an answer about no PTY —; node-pty and the fake settled a
 * write to the id `5` `refused('pty_not_found')` where the pty host refused the id; the pty host
 * dropped an `acknowledgeData` count of -1, NaN, 1.5 or '5' in silence (the fake added `'5'` to
 * its count, making it a string); every provider ignored an unknown `listProcesses` option, a
 * `membershipOnly` of `'yes'` and a `getCwd` `of` nobody reads; and `write(id, 5)` threw a bare
 * `TypeError` without `code` and `option`. Until the thirty-first session every provider ignored a
 * `shutdown` option nobody reads — a misspelt fence (`expectedIncarnationID`) stopped the PTY unfenced.
 */
describe.each(kinds)('provider-level refusals of malformed arguments: %s', (kind) => {
  const b = useBench(kind)

  it('ids, data, counts and option bags: one typed refusal, the option and the value named; a well-formed call still answers', async () => {
    const { provider } = b()
    const p = provider as unknown as Record<string, ((...args: unknown[]) => unknown) | undefined>
    const live = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 30'] } as never)
    const id = live.id
    const idMethods: Array<[method: string, sync: boolean, rest: unknown[]]> = [
      ['write', true, ['x']],
      ['writeBytes', true, [new Uint8Array([120])]],
      ['resize', true, [80, 24]],
      ['getSize', true, []],
      ['shutdown', false, [{ timeoutMs: 1_000 }]],
      ['pauseProducer', true, []],
      ['resumeProducer', true, []],
      ['acknowledgeData', true, [1]],
      ['hasPty', true, []],
      ['probeLiveness', false, []],
      ['getCwd', false, []],
      ['getForegroundProcess', false, []],
      ['hasChildProcesses', false, []],
      ['confirmForeground', false, []],
      ['resetInputModes', false, []],
      ['clearBuffer', false, []],
      ['getBufferSnapshot', false, []],
    ]
    const cases: Array<{ name: string; sync: boolean; call: () => unknown; option: string; value: unknown }> = []
    for (const [method, sync, rest] of idMethods) {
      if (typeof p[method] !== 'function') continue
      for (const bad of [5, '', null, undefined, true]) {
        cases.push({ name: `${method}(${typeof bad === 'string' ? '""' : String(bad)})`, sync, call: () => p[method]!.call(provider, bad, ...rest), option: 'ptyId', value: bad })
      }
    }
    cases.push({ name: 'write(id, 5)', sync: true, call: () => p.write!.call(provider, id, 5), option: 'data', value: 5 })
    cases.push({ name: 'writeBytes(id, "x")', sync: true, call: () => p.writeBytes!.call(provider, id, 'x'), option: 'bytes', value: 'x' })
    if (typeof p.acknowledgeData === 'function') {
      for (const bad of [-1, Number.NaN, 1.5, '5', Number.POSITIVE_INFINITY]) {
        cases.push({ name: `acknowledgeData(id, ${typeof bad === 'string' ? '"5"' : bad})`, sync: true, call: () => p.acknowledgeData!.call(provider, id, bad), option: 'chars', value: bad })
      }
    }
    for (const [options, option, value] of [
      [5, 'options', 5],
      [{ bogus: true }, 'bogus', true],
      [{ membershipOnly: 'yes' }, 'membershipOnly', 'yes'],
      [{ membershipOnli: true }, 'membershipOnli', true],
    ] as const) {
      cases.push({ name: `listProcesses(${JSON.stringify(options)})`, sync: false, call: () => p.listProcesses!.call(provider, options), option, value })
    }
    for (const [options, option, value] of [
      [5, 'options', 5],
      [{ expectedIncarnationId: live.incarnationId }, 'expectedIncarnationId', live.incarnationId],
      [{ incarnationId: 5 }, 'incarnationId', 5],
    ] as const) {
      cases.push({ name: `probeLiveness(id, ${JSON.stringify(options)})`, sync: false, call: () => p.probeLiveness!.call(provider, id, options), option, value })
    }
    for (const [options, option, value] of [
      [5, 'options', 5],
      [{ of: 'shell' }, 'of', 'shell'],
      [{ off: 'leader' }, 'off', 'leader'],
    ] as const) {
      cases.push({ name: `getCwd(id, ${JSON.stringify(options)})`, sync: false, call: () => p.getCwd!.call(provider, id, options), option, value })
    }
    cases.push({ name: 'shutdown(id, 5)', sync: false, call: () => p.shutdown!.call(provider, id, 5), option: 'options', value: 5 })
    // Of the live PTY: a misspelt fence stopped it unfenced (until 7 Dec every provider ignored an
    // option nobody reads, and node-pty and the fake read `immediate: 'yes'` as `false`).
    for (const [options, option, value] of [
      [{ expectedIncarnationID: live.incarnationId }, 'expectedIncarnationID', live.incarnationId],
      [{ incarnationId: live.incarnationId }, 'incarnationId', live.incarnationId],
      [{ immediate: 'yes' }, 'immediate', 'yes'],
      [{ keepHistory: 1 }, 'keepHistory', 1],
      [{ expectedIncarnationId: 5 }, 'expectedIncarnationId', 5],
    ] as const) {
      cases.push({ name: `shutdown(id, ${JSON.stringify(options)})`, sync: false, call: () => p.shutdown!.call(provider, id, options), option, value })
    }
    // The wait budget, checked by the shared `resolveWaitDeadline`: until 7 Dec a plain TypeError (no code, no option) from every provider but SSH's own checks.
    for (const [method, call] of [
      ['listProcesses', (options: unknown) => p.listProcesses!.call(provider, options)],
      ['shutdown', (options: unknown) => p.shutdown!.call(provider, 'ptykit-no-such-pty', options)],
    ] as const) {
      for (const [options, option, value] of [
        [{ deadlineMs: 'soon' }, 'deadlineMs', 'soon'],
        [{ deadlineMs: Number.NaN }, 'deadlineMs', Number.NaN],
        [{ deadlineMs: 5_000 }, 'deadlineMs', 5_000],
        [{ timeoutMs: -1 }, 'timeoutMs', -1],
        [{ timeoutMs: '5s' }, 'timeoutMs', '5s'],
        [{ deadlineMs: Date.now() + 1_000, timeoutMs: 1_000 }, 'deadlineMs', undefined],
        [{ timeoutMS: 1_000 }, 'timeoutMS', 1_000],
      ] as const) {
        const given = value === undefined ? (options as { deadlineMs: number }).deadlineMs : value
        cases.push({ name: `${method}(${JSON.stringify(options)})`, sync: false, call: () => call(options), option, value: given })
      }
    }
    // A listener that is no function: the shared listener set's refusal (until 7 Dec a plain TypeError, but SSH's).
    for (const method of ['onData', 'onExit', 'onBytes', 'onOutputLoss'] as const) {
      if (typeof p[method] !== 'function') continue
      for (const bad of [5, null, 'listener']) {
        cases.push({ name: `${method}(${JSON.stringify(bad)})`, sync: true, call: () => p[method]!.call(provider, bad), option: 'listener', value: bad })
      }
    }

    const seen: Record<string, Cell> = {}
    const wanted: Record<string, Cell> = {}
    for (const { name, sync, call, option, value } of cases) {
      const cell = await cellOf(call, { option, value })
      if (cell.how !== 'returned') cell.error = erasedClass(cell)
      seen[name] = cell
      wanted[name] = { how: sync ? 'threw' : 'rejected', error: 'a TypeError of the provider\'s', code: 'invalid_option', option, namesOption: true, showsValue: true }
    }
    expect(seen).toEqual(wanted)

    // Nothing refused touched the PTY, and well-formed calls answer as before.
    expect(provider.hasPty!(id)).toBe(true)
    expect(await provider.probeLiveness!(id, { incarnationId: live.incarnationId })).toBe(true)
    provider.acknowledgeData?.(id, 0)
    expect(typeof (await provider.getCwd!(id, { of: 'leader' }))).toBe(kind === 'fake' ? 'object' : 'string')
    expect((await provider.listProcesses({ membershipOnly: true, timeoutMs: 5_000 })).map((row) => row.id)).toContain(id)
    await provider.shutdown(id, { timeoutMs: 5_000 })
  }, 30_000)
})
