import { describe, expect, it } from 'vitest'
import type { PtyDataEvent } from '../../src/contracts/index.js'
import { createPtyController } from '../../src/controller/index.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

/**
 * A `data` listener that stops its PTY — "on `quit`, kill it", a host's day-one pattern — on a
 * provider that reports the exit from inside `shutdown` (the fake does, and the controller's docs
 * allow it): every listener after it must still get that `data` before the `exit`, as the
 * controller promises ("every `data` event of an incarnation precedes its `exit`, and nothing of
 * that incarnation follows"). Before, the exit reached them first, the `data` after it, and a
 * terminal handle's `output()` had ended without that last chunk.
 */
describe('an exit caused by a data listener reaches the later listeners after that data', () => {
  it('the controller listeners after it, a terminal handle and its output()', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const later: string[] = []
    controller.on('data', ({ ptyId, data }) => {
      if (data === 'quit') controller.kill(ptyId)
    })
    controller.on('data', ({ data }) => later.push(`data:${data}`))
    controller.on('exit', ({ cause }) => later.push(`exit:${cause.kind}`))
    const terminal = await controller.spawnTerminal({})
    const handle: string[] = []
    terminal.onData(({ data }) => handle.push(`data:${data}`))
    terminal.onExit(({ cause }) => handle.push(`exit:${cause.kind}`))
    const chunks: string[] = []
    const reading = (async () => {
      for await (const chunk of terminal.output()) chunks.push(chunk)
    })()

    provider.emitData(terminal.id, 'hello')
    await provider.settle()
    provider.emitData(terminal.id, 'quit')
    await provider.settle()
    await reading

    expect(later).toEqual(['data:hello', 'data:quit', 'exit:operator_close'])
    expect(handle).toEqual(['data:hello', 'data:quit', 'exit:operator_close'])
    expect(chunks).toEqual(['hello', 'quit'])
    await controller.dispose()
  })

  it('with dataBatchMs: the coalesced window that made a listener kill comes before the exit', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, dataBatchMs: 5 })
    const later: string[] = []
    controller.on('data', ({ ptyId, data }) => {
      if (data.includes('quit')) controller.kill(ptyId)
    })
    controller.on('data', ({ data }) => later.push(`data:${data}`))
    controller.on('exit', ({ cause }) => later.push(`exit:${cause.kind}`))
    const { id } = await controller.spawn({})
    provider.emitData(id, 'a')
    provider.emitData(id, 'b')
    provider.emitData(id, 'quit')
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(later).toEqual(['data:a', 'data:bquit', 'exit:operator_close'])
    await controller.dispose()
  })

  it('other PTYs are not held back: a data listener that disposes the controller ends each one after its own output', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider })
    const ids: string[] = []
    for (let index = 0; index < 20; index += 1) ids.push((await controller.spawn({})).id)
    const events: string[] = []
    let disposing: Promise<void> | undefined
    controller.on('data', () => {
      disposing ??= controller.dispose()
    })
    controller.on('data', ({ ptyId, data }) => events.push(`${ptyId}:${data}`))
    controller.on('exit', ({ ptyId, cause }) => events.push(`${ptyId}:exit:${cause.kind}`))
    provider.emitData(ids[0]!, 'last words')
    await disposing
    expect(events.filter((event) => event.startsWith(`${ids[0]}:`))).toEqual([`${ids[0]}:last words`, `${ids[0]}:exit:operator_close`])
    expect(events.filter((event) => event.endsWith(':exit:operator_close'))).toHaveLength(20)
    expect(provider.livePtyIds()).toEqual([])
  })

  it('output a provider hands over from inside the resume at the exit still comes before that exit', async () => {
    const provider = createFakePtyProvider()
    const controller = createPtyController({ provider, flowControl: { mode: 'always', highWatermarkChars: 5, lowWatermarkChars: 2 } })
    const events: string[] = []
    controller.on('data', ({ data }) => events.push(`data:${data}`))
    controller.on('exit', () => events.push('exit'))
    const { id, incarnationId } = await controller.spawn({})
    // A provider that holds what it reads while paused and hands it over from inside the resume.
    const toController = provider.calls.find((call) => call.method === 'onData')!.args[0] as (event: PtyDataEvent) => void
    const held: string[] = []
    provider.pauseProducer = () => undefined
    provider.resumeProducer = (ptyId: string) => {
      for (const data of held.splice(0)) toController({ id: ptyId, data, incarnationId: incarnationId! })
    }
    provider.emitData(id, 'abcdefghij')
    held.push('tail')
    provider.emitExit(id, { exitCode: 0 })
    expect(events).toEqual(['data:abcdefghij', 'data:tail', 'exit'])
    await controller.dispose()
  })
})
