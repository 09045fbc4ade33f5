// 200 real terminals through their handles, as an IDE extension drives them: spawn, stream into
// consumers of every kind (a fast and a slow for-await, one that reads the first chunk and then
// listens, a listener that acknowledges late from a timer), resize while they stream, then stop
// them all at once. Every stop is verified, every exit is an operator close, every consumer ends,
// no process is left, and nothing the handles added stays behind: no controller listener, no abort
// listener on the extension's shared signal, no timer or handle in the event loop.
import { getEventListeners, setMaxListeners } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyTerminal } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, isDead, liveChildrenOf, waitFor } from './pty-test-support.js'

/** Terminals at once: the scale of the other node-pty scale tests (`stops-at-scale.test.ts`). */
const TERMINALS = 200

/** Lines each terminal prints before it idles (~16 KB each: several reads, a few acks). */
const LINES = 200

/** A scale test's own time limit: 200 forks on a loaded 2-core machine take tens of seconds. */
const SCALE_TEST_TIMEOUT_MS = 120_000

let provider: NodePtyProvider | undefined
let controller: PtyController | undefined

expectNoChildLeftBehind(async () => {
  await controller?.dispose()
  await provider?.dispose()
})

/** How many of the event loop's resources are of `kind` (`TTYWrap`: a PTY's master; `Timeout`). */
function resources(kind: string): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === kind).length
}

describe('terminal handles at scale (node-pty)', () => {
  it(`${TERMINALS} terminals: streamed to every kind of consumer, resized, stopped at once, leaving nothing`, async () => {
    const timersBefore = resources('Timeout')
    provider = createNodePtyProvider()
    controller = createPtyController({ provider })
    const errors: string[] = []
    controller.on('error', (error) => errors.push(`${error.code}: ${error.message}`))
    const deactivate = new AbortController() // one signal for every iterator, as an extension passes
    setMaxListeners(TERMINALS, deactivate.signal) // one abort listener per running loop, by design
    const terminals: PtyTerminal[] = []
    const screens = new Map<PtyTerminal, string>()
    const consumers: Promise<void>[] = []
    const show = (terminal: PtyTerminal, chunk: string): void => {
      screens.set(terminal, (screens.get(terminal) ?? '') + chunk)
    }
    let listenersWithHandles: Record<string, number> | undefined

    for (let start = 0; start < TERMINALS; start += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, offset) =>
          controller!.spawnTerminal({
            file: '/bin/sh',
            args: ['-c', `i=0; while [ $i -lt ${LINES} ]; do echo "${start + offset} line $i ................................................"; i=$((i+1)); done; echo DONE; exec sleep 600`],
          }),
        ),
      )
      listenersWithHandles ??= Object.fromEntries(controller.eventNames().map((name) => [String(name), controller!.listenerCount(name as 'data')]))
      for (const terminal of batch) {
        terminals.push(terminal)
        const signal = deactivate.signal
        switch (terminals.length % 4) {
          case 0: // a fast loop
            consumers.push((async () => { for await (const chunk of terminal.output({ signal })) show(terminal, chunk) })())
            break
          case 1: // a slow loop: flow control paces the process
            consumers.push((async () => {
              for await (const chunk of terminal.output({ signal })) {
                show(terminal, chunk)
                await sleep(2)
              }
            })())
            break
          case 2: { // reads the first chunk, then listens (and never returns the iterator)
            const iterator = terminal.output({ signal })
            consumers.push(iterator.next().then((first) => {
              if (first.done !== true) show(terminal, first.value)
              terminal.onData(({ data }) => show(terminal, data))
            }))
            break
          }
          default: // a listener that acknowledges from a timer, as a renderer's write callback does
            terminal.onData(({ data }) => {
              show(terminal, data)
              setTimeout(() => terminal.acknowledgeData(data.length), 1)
            })
        }
      }
    }

    expect(resources('TTYWrap')).toBeGreaterThanOrEqual(TERMINALS) // each PTY's master
    for (const terminal of terminals) {
      expect(terminal.resize(100, 30)).toBe(true)
      expect([terminal.cols, terminal.rows]).toEqual([100, 30])
    }
    await waitFor(() => (terminals.every((terminal) => screens.get(terminal)?.includes('DONE')) ? true : undefined), 'DONE on every screen', 60_000)
    for (const [index, terminal] of terminals.entries()) {
      expect(screens.get(terminal)).toContain(`${index} line ${LINES - 1} `)
    }

    const stopped = await Promise.all(terminals.map((terminal) => terminal.stop({ timeoutMs: 60_000 })))
    expect(stopped.filter((verified) => !verified)).toEqual([])
    const causes = (await Promise.all(terminals.map((terminal) => terminal.exited))).map((exit) => exit.cause.kind)
    expect(causes.filter((kind) => kind !== 'operator_close')).toEqual([])
    await Promise.all(consumers)
    expect(terminals.filter((terminal) => !isDead(terminal.pid!))).toEqual([])
    expect(terminals.flatMap((terminal) => liveChildrenOf(terminal.pid!))).toEqual([])

    // Late calls from async callbacks answer harmlessly, with the truth.
    for (const terminal of terminals) {
      expect(terminal.write('late')).toBe(false)
      expect(terminal.resize(80, 24)).toBe(false)
      expect(terminal.kill()).toBe(false)
      await expect(terminal.stop()).resolves.toBe(true)
    }
    expect(getEventListeners(deactivate.signal, 'abort')).toHaveLength(0)
    expect(Object.fromEntries(controller.eventNames().map((name) => [String(name), controller!.listenerCount(name as 'data')]))).toEqual(listenersWithHandles)
    expect(errors).toEqual([])
    await controller.dispose()
    await provider.dispose()
    await sleep(10) // the late acks' 1 ms timers
    expect(resources('TTYWrap')).toBe(0)
    expect(resources('Timeout')).toBeLessThanOrEqual(timersBefore)
  }, SCALE_TEST_TIMEOUT_MS)
})
