// A misspelt spawn option was silently ignored (helper-231): in plain JavaScript, `spawn({ sessionID:
// 'x' })` minted a fresh id, `{ cdw: '/tmp' }` ran in the default directory, `{ col: 100 }` at 80
// columns. Spawn options are still not checked for unknown keys (hosts pass their own records), but a
// near miss of a spawn option name, or a likely mistake from a small table, is refused.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ProviderSpawnOptions, PtySpawnOptions } from '../../src/contracts/index.js'
import * as contracts from 'ptykit/contracts'
import { findMisspeltSpawnOption, SPAWN_OPTION_NAMES } from '../../src/contracts/spawn-options.js'

describe('SPAWN_OPTION_NAMES', () => {
  it('is exactly the keys of the controller\'s and the providers\' spawn option types', () => {
    // tsc refuses this literal if a key of either type is missing from it, or a name is none of theirs.
    const every: Required<PtySpawnOptions & ProviderSpawnOptions> = {
      file: undefined, args: undefined, command: undefined, cols: undefined, rows: undefined, cwd: undefined,
      env: undefined, envToDelete: undefined, hostId: undefined, scopeId: undefined, slot: undefined,
      slotCreateClaim: undefined, claim: undefined, sessionId: undefined, isNewSession: undefined,
      preAllocatedHandle: undefined, signal: undefined, onPtySpawnCommitted: undefined, metadata: undefined,
      attachOnly: undefined, expectedIncarnationId: undefined, slotKey: undefined, claimKey: undefined,
    }
    expect([...SPAWN_OPTION_NAMES].sort()).toEqual(Object.keys(every).sort())
    expect(new Set(SPAWN_OPTION_NAMES).size).toBe(SPAWN_OPTION_NAMES.length)
  })
})

const known: readonly string[] = SPAWN_OPTION_NAMES
const letter = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'.split(''))

/** One edit of `name`: a letter dropped, added or changed, or two neighbours swapped. */
const singleEdit = (name: string) =>
  fc.oneof(
    fc.nat(name.length - 1).map((at) => name.slice(0, at) + name.slice(at + 1)),
    fc.tuple(fc.nat(name.length), letter).map(([at, added]) => name.slice(0, at) + added + name.slice(at)),
    fc.tuple(fc.nat(name.length - 1), letter).map(([at, put]) => name.slice(0, at) + put + name.slice(at + 1)),
    fc.nat(name.length - 2).map((at) => name.slice(0, at) + name[at + 1]! + name[at]! + name.slice(at + 2)),
  )

describe('findMisspeltSpawnOption', () => {
  it('passes every known name, whatever its value', () => {
    fc.assert(
      fc.property(fc.subarray([...known]), fc.anything(), (names, value) => {
        expect(findMisspeltSpawnOption(Object.fromEntries(names.map((name) => [name, value])))).toBeUndefined()
      }),
    )
  })

  it('refuses every single-edit misspelling of a known name of four letters or more, naming it, its value and a known option', () => {
    const long = known.filter((name) => name.length >= 4)
    fc.assert(
      fc.property(
        fc.constantFrom(...long).chain((name) => singleEdit(name)).filter((name) => name !== '' && !known.includes(name)),
        fc.integer(),
        (misspelt, value) => {
          const found = findMisspeltSpawnOption({ file: '/bin/sh', [misspelt]: value })
          expect(found).toMatchObject({ name: misspelt, value, secret: false })
          expect(known).toContain(found!.meant)
          expect(found!.expected).toContain(`\`${found!.meant}\``)
        },
      ),
      { numRuns: 2_000 },
    )
  })

  it.each([
    ['sessionID', 'sessionId'],
    ['session_id', 'sessionId'],
    ['session', 'sessionId'],
    ['cdw', 'cwd'],
    ['CWD', 'cwd'],
    ['col', 'cols'],
    ['row', 'rows'],
    ['argv', 'args'],
    ['arg', 'args'],
    ['fiel', 'file'],
    ['comand', 'command'],
    ['hostID', 'hostId'],
    ['scope_id', 'scopeId'],
    ['metaData', 'metadata'],
    ['envToDelte', 'envToDelete'],
    ['attachonly', 'attachOnly'],
    ['id', 'sessionId'],
    ['ID', 'sessionId'],
    ['ptyId', 'sessionId'],
    ['pty_id', 'sessionId'],
    ['cmd', 'file'],
  ])('refuses `%s`, meaning `%s`', (name, meant) => {
    expect(findMisspeltSpawnOption({ [name]: 1 })).toMatchObject({ name, meant, value: 1 })
  })

  it('refuses `evn` as meaning `env`, marking its value secret', () => {
    const env = { TOKEN: 'secret-value' }
    expect(findMisspeltSpawnOption({ evn: env })).toMatchObject({ name: 'evn', meant: 'env', secret: true })
  })

  // Keys a host plausibly carries in its own records, and words near a short option name that mean
  // something else: none is refused (docs/spawn-pipeline.md lists them).
  it.each([
    'name', 'meta', 'tag', 'title', 'label', 'kind', 'type', 'key', 'icon', 'color', 'theme', 'font', 'shell', 'profile', 'path',
    'dir', 'pwd', 'dev', 'venv', 'envs', 'environment', 'columns', 'host', 'hosts', 'scope', 'user', 'owner', 'group', 'term', 'data', 'extra',
    'comment', 'plain', 'chain', 'signed', 'hotkey', 'claimed', 'timeout', 'timeoutMs', 'deadlineMs', 'keepHistory', 'terminalName',
    'inheritedEnv', 'defaultCwd', 'tabId', 'paneId', 'slotId', 'agent', 'cmdline', 'width', 'height', 'encoding',
  ])('passes a host\'s own key `%s`', (name) => {
    expect(findMisspeltSpawnOption({ [name]: 'x' })).toBeUndefined()
  })
})

// helper-240: a custom provider called without the controller (whose pipeline refuses a misspelt
// option first) had no way to refuse the keys the bundled providers refuse: the check was internal.
// It is public now, from `ptykit/contracts`, with the standard refusal beside it.
describe('the public misspelt-spawn-option check (ptykit/contracts)', () => {
  it('is the one the pipeline and the bundled providers use', () => {
    expect(contracts.findMisspeltSpawnOption).toBe(findMisspeltSpawnOption)
    expect(contracts.findMisspeltSpawnOption({ cdw: '/tmp' })).toMatchObject({ name: 'cdw', meant: 'cwd', value: '/tmp', secret: false })
  })

  it.each([
    [{ file: '/bin/sh', sessionID: 'x' }, 'sessionID', 'x', 'sessionId'],
    [{ cdw: '/tmp' }, 'cdw', '/tmp', 'cwd'],
    [{ col: 100 }, 'col', 100, 'cols'],
    [{ argv: ['-c', 'true'] }, 'argv', ['-c', 'true'], 'args'],
    [{ id: 'x' }, 'id', 'x', 'sessionId'],
    [{ ptyId: 'x' }, 'ptyId', 'x', 'sessionId'],
    [{ cmd: 'ls' }, 'cmd', 'ls', 'file'],
  ] as Array<[Record<string, unknown>, string, unknown, string]>)('assertNoMisspeltSpawnOption(%j) throws the standard refusal naming `%s`', (options, option, value, meant) => {
    let thrown: unknown
    try {
      contracts.assertNoMisspeltSpawnOption(options)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(TypeError)
    expect(thrown).toMatchObject({ code: 'invalid_spawn_option', option, value })
    const { message } = thrown as TypeError
    expect(message).toMatch(new RegExp(`^Expected the \`${option}\` option to be left out \\(no such spawn option, it would be ignored — did you mean \`${meant}\``))
    expect(message).toMatch(/, got .+ \((string|number|array)\)$/)
  })

  it('refuses a misspelt `env` without showing or keeping its value', () => {
    let thrown: unknown
    try {
      contracts.assertNoMisspeltSpawnOption({ evn: { TOKEN: 'secret-value' } })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ code: 'invalid_spawn_option', option: 'evn', value: undefined })
    expect((thrown as Error).message).toContain('did you mean `env`')
    expect((thrown as Error).message).not.toContain('secret-value')
  })

  it('passes every spawn option and a host\'s own keys', () => {
    const every = Object.fromEntries(SPAWN_OPTION_NAMES.map((name) => [name, undefined]))
    expect(() => contracts.assertNoMisspeltSpawnOption({ ...every, name: 'tab 1', title: 'x', pwd: '/', color: 'red' })).not.toThrow()
    expect(() => contracts.assertNoMisspeltSpawnOption({})).not.toThrow()
  })
})
