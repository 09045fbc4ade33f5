// The guide's "a view over output()" snippet (docs/controller.md, Terminal handles), run for real:
// @xterm/headless parses every chunk before the loop pulls the next one, so the parser paces the PTY.
import { Terminal } from '@xterm/headless'
import { expect, it } from 'vitest'
import { createPtyController, type PtyTerminal } from 'ptykit/controller'
import { createFakePtyProvider } from 'ptykit/testing'

/** Mirror a terminal into a headless xterm until it exits; each chunk is parsed before the next pull. */
async function mirror(terminal: PtyTerminal, view: Terminal): Promise<void> {
  for await (const chunk of terminal.output()) {
    await new Promise<void>((resolve) => view.write(chunk, resolve))
  }
}

function screenLine(view: Terminal, row: number): string {
  const buffer = view.buffer.active
  return buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? ''
}

it('renders the output into an xterm view, paced by the parser, and ends at the exit', async () => {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider })
  const terminal = await controller.spawnTerminal({ cols: 40, rows: 10 })
  const view = new Terminal({ cols: terminal.cols, rows: terminal.rows, allowProposedApi: true })
  const mirrored = mirror(terminal, view)

  provider.emitData(terminal.id, 'hello\r\n')
  provider.emitData(terminal.id, '\x1b[1mbold\x1b[0m world\r\n')
  for (let i = 0; i < 150; i += 1) provider.emitData(terminal.id, `${'y'.repeat(999)}\n`) // a flood
  expect(provider.getPty(terminal.id)?.paused).toBe(true) // the parser has not caught up yet
  provider.emitData(terminal.id, '\x1b[2J\x1b[Hdone') // clear the screen, write in the corner
  provider.emitExit(terminal.id, { exitCode: 0 })

  await mirrored // every chunk parsed, and the loop ended with the exit
  expect(screenLine(view, 0)).toBe('done')
  expect(provider.getPty(terminal.id)?.paused).toBe(false)
  expect(provider.calls.filter((c) => c.method.endsWith('Producer')).map((c) => c.method)).toEqual([
    'pauseProducer',
    'resumeProducer',
  ])
  expect((await terminal.exited).cause).toEqual({ kind: 'exited', exitCode: 0 })
  view.dispose()
  await controller.dispose()
})
