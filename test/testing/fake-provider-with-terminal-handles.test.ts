// The setups of docs/testing-with-the-fake-provider.md, written with terminal handles
// (`spawnTerminal`) — the "With terminal handles" section of the guide — so it cannot drift.
import { describe, expect, it, vi } from 'vitest'
import { STOP_UNCONFIRMED_AFTER_MS, createPtyController } from 'ptykit/controller'
import { createFakePtyProvider, createManualClock } from 'ptykit/testing'

describe('docs: testing with the fake provider, with terminal handles', () => {
  it('1. a clean exit', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    provider.scriptNextSpawn({ output: ['building…\r\n', 'done\r\n'], exit: { exitCode: 0 } })

    const terminal = await controller.spawnTerminal({ file: 'make' })
    const chunks: string[] = []
    for await (const chunk of terminal.output()) chunks.push(chunk) // ends after the last chunk

    expect(chunks).toEqual(['building…\r\n', 'done\r\n'])
    expect((await terminal.exited).cause).toEqual({ kind: 'exited', exitCode: 0 })
    expect(terminal.write('too late')).toBe(false) // the PTY is gone
    await controller.dispose()
  })

  it('2. killed by a signal, with exit code 0', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    provider.scriptNextSpawn({ output: ['allocating…\r\n'], exit: { exitCode: 0, signal: 9 } })

    const terminal = await controller.spawnTerminal({})
    await provider.settle() // the exit happens before anyone awaits it; `exited` still has it

    expect(await terminal.exited).toEqual({
      ptyId: terminal.id,
      hostId: 'local',
      incarnationId: terminal.incarnationId,
      code: 0,
      cause: { kind: 'signaled', signal: 9 },
    })
    await controller.dispose()
  })

  it('3. the exit races the spawn reply', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    provider.scriptNextSpawn({ output: ['fatal: bad config\r\n'], exitBeforeReply: { exitCode: 2 } })

    await expect(controller.spawnTerminal({})).rejects.toMatchObject({ code: 'exited_during_start' })
    expect(provider.livePtyIds()).toEqual([])
    await controller.dispose()
  })

  it('3b. a reused id is a new handle; the old one is fenced off', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    provider.scriptNextSpawn({ id: 'same-id' })
    const old = await controller.spawnTerminal({})
    const oldData = vi.fn()
    old.onData(oldData)

    provider.scriptNextSpawn({ id: 'same-id' })
    const current = await controller.spawnTerminal({})
    provider.emitData('same-id', 'new output')

    expect(current).not.toBe(old)
    expect(controller.terminal('same-id')).toBe(current)
    expect(oldData).not.toHaveBeenCalled()
    expect(old.write('ls\r')).toBe(false) // never reaches the new process
    await controller.dispose()
  })

  it('4. a stop that is never confirmed', async () => {
    const clock = createManualClock()
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, clock })
    provider.scriptNextSpawn({ shutdown: 'never_confirm' })
    const terminal = await controller.spawnTerminal({})

    const onExit = vi.fn()
    terminal.onExit(onExit)
    expect(terminal.kill()).toBe(true)
    await provider.settle()
    expect(onExit).not.toHaveBeenCalled() // stop dispatched, nothing confirmed yet

    clock.advance(STOP_UNCONFIRMED_AFTER_MS)
    expect(await terminal.exited).toMatchObject({ code: -1, cause: { kind: 'unknown', reason: 'stop_unverified' } })
    expect(provider.livePtyIds()).toEqual([terminal.id]) // the fake process is still running
    expect(controller.hasPty(terminal.id)).toBeNull() // unknown, not dead
  })

  it('5. a flood paced by a slow for-await loop', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const terminal = await controller.spawnTerminal({})
    const output = terminal.output()

    const chunk = 'x'.repeat(1_000)
    for (let i = 0; i < 150; i += 1) provider.emitData(terminal.id, chunk) // 150 000 chars
    expect(provider.getPty(terminal.id)?.paused).toBe(true) // nobody pulled: paused

    let received = ''
    for await (const piece of output) {
      received += piece // each pull acknowledges the chunk before it
      if (received.length === 150 * chunk.length) break // a break releases the rest
    }
    expect(provider.getPty(terminal.id)?.paused).toBe(false)
    // Paused by the flood, resumed as the loop caught up; the break then tells the provider that the
    // PTY's only consumer left flow control (a resume, paused or not: nobody acknowledges from here on).
    expect(provider.calls.filter((c) => c.method.endsWith('Producer')).map((c) => c.method)).toEqual([
      'pauseProducer',
      'resumeProducer',
      'resumeProducer',
    ])
    await controller.dispose()
  })

  it('await using stops the terminal at the end of the scope', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    {
      await using terminal = await controller.spawnTerminal({})
      terminal.write('make\r')
    }
    expect(provider.livePtyIds()).toEqual([])
    await controller.dispose()
  })
})
