import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { NodePtyOptionError, isNodePtyOptionError } from 'ptykit/node-pty'
import {
  NODE_PTY_FALLBACK_SHELL,
  NODE_PTY_MAX_DIMENSION,
  createNodePtyLaunchPlan,
  type NodePtyLaunchContext,
} from '../../src/node-pty/launch-plan.js'

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ptykit-launch-')))
const plainFile = join(dir, 'plain.txt')
writeFileSync(plainFile, 'not a program')
const script = join(dir, 'tool.sh')
writeFileSync(script, '#!/bin/sh\n')
chmodSync(script, 0o755)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const context: NodePtyLaunchContext = {
  env: { PATH: '/usr/bin:/bin', HOME: '/home/x', SHELL: '/bin/sh', TMUX: 'x', COLUMNS: '80', KEEP: 'yes' },
  defaultCwd: dir,
  platform: 'linux',
}

async function refusal(launch: Record<string, unknown>): Promise<NodePtyOptionError> {
  const error = await createNodePtyLaunchPlan(launch as never, context).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(isNodePtyOptionError(error), `refusal of ${JSON.stringify(launch)}`).toBe(true)
  return error as NodePtyOptionError
}

describe('createNodePtyLaunchPlan', () => {
  it('fills the defaults: $SHELL, no args, the default cwd, 80x24, the inherited env without host-terminal variables', async () => {
    const plan = await createNodePtyLaunchPlan({}, context)
    expect(plan).toMatchObject({ file: '/bin/sh', args: [], cwd: dir, cols: 80, rows: 24, command: undefined })
    expect(plan.env).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/x', SHELL: '/bin/sh', KEEP: 'yes' })
  })

  it('hands process.env over as is when the spawn inherits it unchanged (node-pty sanitizes it), and copies it otherwise', async () => {
    const inherit = { ...context, env: process.env }
    expect((await createNodePtyLaunchPlan({ file: '/bin/sh' }, inherit)).env).toBe(process.env)
    const changed = await createNodePtyLaunchPlan({ file: '/bin/sh', env: { PTYKIT_EXTRA: '1' } }, inherit)
    expect(changed.env).not.toBe(process.env)
    expect(changed.env['PTYKIT_EXTRA']).toBe('1')
    const deleted = await createNodePtyLaunchPlan({ file: '/bin/sh', envToDelete: ['PATH'] }, inherit)
    expect(deleted.env).not.toBe(process.env)
    expect(deleted.env['PATH']).toBeUndefined()
  })

  it('falls back to /bin/sh when $SHELL is unset or unusable, and prefers the host default shell', async () => {
    expect((await createNodePtyLaunchPlan({}, { ...context, env: { PATH: '/bin' } })).file).toBe(NODE_PTY_FALLBACK_SHELL)
    expect((await createNodePtyLaunchPlan({}, { ...context, env: { SHELL: '/no/such/shell' } })).file).toBe(NODE_PTY_FALLBACK_SHELL)
    expect((await createNodePtyLaunchPlan({}, { ...context, defaultShell: script })).file).toBe(script)
  })

  it('applies env on top of the inherited one, then envToDelete; an explicit env may set a host-terminal variable', async () => {
    const plan = await createNodePtyLaunchPlan({ env: { KEEP: 'no', NEW: '1', COLUMNS: '120' }, envToDelete: ['HOME', 'NEW'] }, context)
    expect(plan.env).toEqual({ PATH: '/usr/bin:/bin', SHELL: '/bin/sh', KEEP: 'no', COLUMNS: '120' })
  })

  it('resolves a relative cwd against the default one and accepts programs by path or by PATH name', async () => {
    expect((await createNodePtyLaunchPlan({ cwd: '.' }, context)).cwd).toBe(dir)
    expect((await createNodePtyLaunchPlan({ file: script, args: ['a', ''] }, context)).args).toEqual(['a', ''])
    expect((await createNodePtyLaunchPlan({ file: 'sh' }, context)).file).toBe('sh')
    expect((await createNodePtyLaunchPlan({ file: './tool.sh' }, context)).file).toBe('./tool.sh')
  })

  it('looks a bare program up on the child’s PATH (execvp’s default when it has none), not the host’s', async () => {
    expect((await createNodePtyLaunchPlan({ file: 'sh', envToDelete: ['PATH'] }, context)).file).toBe('sh')
    expect((await createNodePtyLaunchPlan({ file: 'tool.sh', env: { PATH: dir } }, context)).file).toBe('tool.sh')
    expect((await refusal({ file: 'tool.sh' })).option).toBe('file')
    expect((await refusal({ file: 'sh', env: { PATH: dir } })).option).toBe('file')
  })

  it('never trusts where a bare name was found before: moved, no longer executable or removed, it is looked up again', async () => {
    const early = join(dir, 'path-early')
    const late = join(dir, 'path-late')
    mkdirSync(early)
    mkdirSync(late)
    const PATH = `${early}:${late}`
    const place = (where: string): void => {
      writeFileSync(join(where, 'prog'), '#!/bin/sh\n')
      chmodSync(join(where, 'prog'), 0o755)
    }
    const found = async (): Promise<boolean> => {
      const plan = await createNodePtyLaunchPlan({ file: 'prog', env: { PATH } }, context).catch(() => null)
      return plan !== null
    }
    place(late)
    expect(await found()).toBe(true)
    // Gone since it was found: refused, as before the first lookup.
    rmSync(join(late, 'prog'))
    expect(await found()).toBe(false)
    place(early)
    expect(await found()).toBe(true)
    // Still there but no longer executable: refused; found again once it is back elsewhere.
    chmodSync(join(early, 'prog'), 0o644)
    expect(await found()).toBe(false)
    place(late)
    expect(await found()).toBe(true)
  })

  it('looks a relative PATH entry up under the spawn’s cwd, where the child’s execvp will, not the host’s', async () => {
    const project = join(dir, 'project')
    mkdirSync(join(project, 'bin'), { recursive: true })
    writeFileSync(join(project, 'bin', 'tool'), '#!/bin/sh\n')
    chmodSync(join(project, 'bin', 'tool'), 0o755)
    expect((await createNodePtyLaunchPlan({ file: 'tool', cwd: project, env: { PATH: 'bin:/usr/bin' } }, context)).file).toBe('tool')
    // Under another cwd the same relative entry names nothing, whatever the host's own cwd holds.
    expect((await refusal({ file: 'tool', cwd: dir, env: { PATH: 'bin:/usr/bin' } })).option).toBe('file')
  })

  it('asks on every spawn whether a program by path may be executed: removed or made non-executable since, it is refused', async () => {
    const program = join(dir, 'by-path')
    const accepted = async (): Promise<boolean> => (await createNodePtyLaunchPlan({ file: program }, context).catch(() => null)) !== null
    // A directory admits X_OK, and is no program.
    mkdirSync(program)
    chmodSync(program, 0o755)
    expect(await accepted()).toBe(false)
    rmSync(program, { recursive: true })
    writeFileSync(program, '#!/bin/sh\n')
    chmodSync(program, 0o755)
    expect(await accepted()).toBe(true)
    chmodSync(program, 0o644)
    expect(await accepted()).toBe(false)
    chmodSync(program, 0o755)
    expect(await accepted()).toBe(true)
    rmSync(program)
    expect(await accepted()).toBe(false)
    // Refused while it was gone; accepted again once it is back.
    writeFileSync(program, '#!/bin/sh\n')
    chmodSync(program, 0o755)
    expect(await accepted()).toBe(true)
  })

  it('refuses each bad option, naming the option and the value (an environment value by its type only)', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ cols: 0 }, 'cols', '0 (number)'],
      [{ cols: 1.5 }, 'cols', '1.5 (number)'],
      [{ rows: NODE_PTY_MAX_DIMENSION + 1 }, 'rows', String(NODE_PTY_MAX_DIMENSION + 1)],
      [{ rows: '24' }, 'rows', '"24" (string)'],
      [{ cwd: join(dir, 'missing') }, 'cwd', 'missing'],
      [{ cwd: plainFile }, 'cwd', 'not a directory'],
      [{ cwd: '' }, 'cwd', '"" (string)'],
      [{ file: join(dir, 'nope') }, 'file', 'does not exist'],
      [{ file: plainFile }, 'file', 'plain.txt'],
      [{ file: 'no-such-program-ptykit' }, 'file', 'no-such-program-ptykit'],
      [{ file: '' }, 'file', '"" (string)'],
      [{ args: 'ls -l' }, 'args', '"ls -l" (string)'],
      [{ args: ['ok', 'bad\0'] }, 'args[1]', 'NUL'],
      // An environment value may be a secret: its type is shown, never the value (secret-env-values.test.ts).
      [{ env: { A: 1 } }, 'env.A', '[redacted] (number)'],
      [{ env: { A: 'x\0y' } }, 'env.A', '[redacted] (string of 3 characters)'],
      [{ env: { 'A=B': 'x' } }, 'env', '"A=B"'],
      [{ env: ['x'] }, 'env', '[redacted] (array)'],
      // A Map's variables are not its entries: refused, never dropped in silence (its values unshown).
      [{ env: new Map([['TOKEN', 'secret-value']]) }, 'env', 'not a Map, not an array), got [redacted] (Map)'],
      [{ envToDelete: 'HOME' }, 'envToDelete', '"HOME" (string)'],
      [{ envToDelete: [''] }, 'envToDelete[0]', '"" (string)'],
      [{ command: 'echo \0' }, 'command', 'NUL'],
    ]
    for (const [launch, option, fragment] of cases) {
      const error = await refusal(launch)
      expect(error).toBeInstanceOf(TypeError)
      expect(error.code).toBe('invalid_spawn_option')
      expect(error.option).toBe(option)
      expect(error.message).toContain(`\`${option}\``)
      expect(error.message).toContain(fragment)
    }
  })

  it('P-launch-1: accepts exactly the integer sizes from 1 to the maximum', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.integer({ min: -10, max: NODE_PTY_MAX_DIMENSION + 10 }), fc.double()), async (cols) => {
        const valid = Number.isInteger(cols) && cols >= 1 && cols <= NODE_PTY_MAX_DIMENSION
        const outcome = await createNodePtyLaunchPlan({ cols, file: script }, context).then(
          (plan) => plan.cols,
          (error: unknown) => (isNodePtyOptionError(error) ? error.option : error),
        )
        expect(outcome).toBe(valid ? cols : 'cols')
      }),
      { numRuns: 60 },
    )
  })
})
