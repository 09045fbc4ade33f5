// Options nobody reads are refused, not ignored (helper-135): in plain JavaScript, or with options
// built elsewhere, TypeScript does not catch a misspelling, and an ignored option does something
// else than asked — `dispose({ stopPTYs: false })` stopped every PTY it was meant to keep.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'
import { assertKnownOptions } from '../../src/contracts/known-options.js'
import { createNodePtyProvider } from '../../src/node-pty/index.js'
import { createPtyHostProvider } from '../../src/pty-host/index.js'
import { createSshProvider } from '../../src/ssh/index.js'

describe('misspelt options', () => {
  it('dispose({ stopPTYs: false }) is refused naming the option meant, and disposes and stops nothing', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const { id } = await controller.spawn({})
    // Typed as every refused argument (code, option, value), since 7 Dec.
    await expect(controller.dispose({ stopPTYs: false } as never)).rejects.toThrow(
      Object.assign(new TypeError('Unknown option `stopPTYs`: did you mean `stopPtys`? (an unknown option would be ignored)'), { code: 'invalid_option', option: 'stopPTYs', value: false }),
    )
    expect(controller.disposed).toBe(false)
    expect(provider.livePtyIds()).toEqual([id])
    // The call meant still works, and keeps the PTY.
    await controller.dispose({ stopPtys: false })
    expect(provider.livePtyIds()).toEqual([id])
  })

  it.each([
    [{ flowcontrol: false }, 'Unknown option `flowcontrol`: did you mean `flowControl`?'],
    [{ stop: { forceAfter: 100 } }, 'Unknown option `stop.forceAfter`: did you mean `forceAfterMs`?'],
    [{ stop: { grace: 100 } }, 'Unknown option `stop.grace`: the known ones are `forceAfterMs`, `unconfirmedAfterMs`, `defaultDeadlineMs`'],
    [{ flowControl: { high_watermark_chars: 10 } }, 'Unknown option `flowControl.high_watermark_chars`: did you mean `highWatermarkChars`?'],
    [{ databatchMs: 5 }, 'Unknown option `databatchMs`: did you mean `dataBatchMs`?'],
  ])('createPtyController(%j) is refused naming the option', (extra, message) => {
    const provider = createFakePtyProvider()
    expect(() => createPtyController({ provider, ...(extra as object) })).toThrow(message)
  })

  it('accepts exactly the known names: any other name is refused, naming it', () => {
    const known = ['alpha', 'betaGamma']
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.anything(), { maxKeys: 4 }), (options) => {
        const unknown = Object.keys(options).filter((name) => !known.includes(name))
        if (unknown.length === 0) expect(() => assertKnownOptions('x.', options, known)).not.toThrow()
        else expect(() => assertKnownOptions('x.', options, known)).toThrow(new RegExp(`^Unknown option \`x\\.${unknown[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\``))
      }),
    )
    expect(() => assertKnownOptions('', { alpha: 1, betaGamma: 2 }, known)).not.toThrow()
    expect(() => assertKnownOptions('', undefined, known)).not.toThrow()
  })

  it('each provider factory refuses an option it does not know with its typed option error, naming the option meant and never showing the value', () => {
    expect(() => createNodePtyProvider({ outptu: 'bytes' } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_spawn_option', option: 'outptu', value: undefined, message: expect.stringContaining('did you mean `output`?') }),
    )
    // A misspelt inheritedEnv holds the environment: not shown.
    expect(() => createNodePtyProvider({ inheritEnv: { TOKEN: 'secret-value' } } as never)).toThrow(expect.objectContaining({ message: expect.not.stringContaining('secret-value') }))
    expect(() => createPtyHostProvider({ sockPath: '/tmp/x.sock' } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_option', option: 'sockPath', message: expect.stringContaining('did you mean `socketPath`?') }),
    )
    expect(() => createSshProvider({ host: 'h', username: 'u', knownhostsPath: '/k' } as never)).toThrow(
      expect.objectContaining({ option: 'knownhostsPath', message: expect.stringContaining('did you mean `knownHostsPath`?') }),
    )
    expect(() => createSshProvider({ host: 'h', username: 'u', passPhrase: 'hunter2' } as never)).toThrow(expect.objectContaining({ message: expect.not.stringContaining('hunter2') }))
  })
})
