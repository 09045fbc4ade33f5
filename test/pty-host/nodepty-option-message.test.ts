/**
 * startPtyHost's refusal of a bad `nodePty` option names `nodePty.<option>` in its
 * message. The option's name is rewritten with String.prototype.replace and a *string*
 * replacement, whose `$'`, `$&`, `$$`… are substitution patterns: an inheritedEnv key holding a
 * `$` (legal in an environment) garbles the message.
 */
import { startPtyHost } from 'ptykit/pty-host'
import { describe, expect, it } from 'vitest'
import { hostFixture, useCleanups } from './pty-host-test-support.js'

const cleanups = useCleanups()

describe('startPtyHost: the message of a refused nested nodePty option', () => {
  it.each(["A$'B", 'PRICE$$', 'X$&Y', 'PLAIN'])('names nodePty.inheritedEnv.%s verbatim', async (key) => {
    const { socketPath } = hostFixture(cleanups)
    const refused = await startPtyHost({ socketPath, nodePty: { inheritedEnv: { [key]: 1 as never } } }).catch((error: unknown) => error)
    expect(refused).toMatchObject({ code: 'invalid_option', option: `nodePty.inheritedEnv.${key}` })
    expect((refused as Error).message).toBe(`Expected the \`nodePty.inheritedEnv.${key}\` option to be a string, got 1 (number)`)
  })
})
