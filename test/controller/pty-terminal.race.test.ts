// fc.scheduler race test: the spawn reply, the output and the exit of a terminal land in every
// order. A handle that spawnTerminal hands over, read with output() at once, yields every chunk in
// order and ends; `exited` resolves with the exit; or the spawn is refused as exited_during_start.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyTerminal } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

type Opened = { terminal: PtyTerminal; chunks: string[]; ended: Promise<void> } | { error: unknown }

describe('PtyTerminal races', () => {
  it('every chunk reaches an iterator opened right after spawnTerminal, whatever lands first', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 0, max: 4 }), fc.boolean(), async (s, count, exits) => {
        const provider = createFakePtyProvider({ scheduling: 'manual' })
        const controller = createPtyController({ provider })
        provider.scriptNextSpawn({ hang: true, id: 'p' })
        const opened: Promise<Opened> = controller.spawnTerminal({}).then(
          (terminal) => {
            const chunks: string[] = []
            const output = terminal.output()
            const ended = (async () => {
              for await (const chunk of output) chunks.push(chunk)
            })()
            return { terminal, chunks, ended }
          },
          (error: unknown) => ({ error }),
        )
        await provider.settle() // the spawn reaches the provider and hangs there
        expect(provider.livePtyIds()).toEqual(['p'])

        const sent = Array.from({ length: count }, (_, k) => `chunk ${k};`)
        void s.schedule(Promise.resolve('reply')).then(() => provider.releaseSpawn('p'))
        s.scheduleSequence([
          ...sent.map((data) => ({ label: data, builder: async () => provider.emitData('p', data) })),
          ...(exits ? [{ label: 'exit', builder: async () => provider.emitExit('p', { exitCode: 0 }) }] : []),
        ])
        await s.waitAll()
        const result = await opened

        if ('error' in result) {
          expect(exits).toBe(true) // only a process that died can be refused
          expect(result.error).toMatchObject({ code: 'exited_during_start' })
        } else if (exits) {
          await result.ended
          expect(result.chunks).toEqual(sent)
          expect((await result.terminal.exited).cause).toEqual({ kind: 'exited', exitCode: 0 })
        } else {
          await provider.settle()
          expect(result.chunks).toEqual(sent)
          await controller.dispose() // stops it: the loop ends with the operator close
          await result.ended
          expect((await result.terminal.exited).cause).toEqual({ kind: 'operator_close' })
        }
        await controller.dispose()
      }),
      { numRuns: 150 },
    )
  })
})
