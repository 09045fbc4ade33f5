import headless from '@xterm/headless'
import serializeAddon from '@xterm/addon-serialize'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPtyController, type PtyController, type PtyControllerDataEvent } from 'ptykit/controller'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { createInMemorySlotStore } from 'ptykit/spawn'
import { expectNoChildLeftBehind, liveChildrenOf, waitFor } from './pty-test-support.js'

const { Terminal } = headless
const { SerializeAddon } = serializeAddon

let provider: NodePtyProvider
let controller: PtyController
const store = createInMemorySlotStore()
const data: PtyControllerDataEvent[] = []
const outputOf = (id: string): string => data.filter((event) => event.ptyId === id).map((event) => event.data).join('')

expectNoChildLeftBehind(async () => {
  await controller.dispose()
  await provider.dispose()
})

beforeAll(() => {
  provider = createNodePtyProvider()
  controller = createPtyController({ provider, store })
  controller.on('data', (event) => data.push(event))
})

/** An interactive POSIX shell (dash: job control on, no readline modes of its own). */
async function spawnShell(): Promise<{ id: string; pid: number }> {
  const reply = await controller.spawn({ file: '/bin/sh', args: ['-i'], env: { PS1: 'READY$ ' } })
  await waitFor(() => (outputOf(reply.id).includes('READY$ ') ? true : undefined), 'the prompt')
  return { id: reply.id, pid: reply.pid! }
}

function write(term: InstanceType<typeof Terminal>, text: string): Promise<void> {
  return new Promise((resolve) => term.write(text, resolve))
}

/** Kitty keyboard flags of the main screen after `stream` (CSI > f u push, CSI < n u pop, CSI = f ; m u set). */
function kittyFlagsAfter(stream: string): number {
  const stack: number[] = [0]
  for (const match of stream.matchAll(/\x1b\[([<>=])(\d*)(?:;(\d+))?u/g)) {
    const [, kind, first, mode] = match
    const n = first === '' || first === undefined ? undefined : Number(first)
    if (kind === '>') stack.push(n ?? 0)
    else if (kind === '<') stack.splice(Math.max(1, stack.length - (n ?? 1)))
    else if (kind === '=' && (mode === undefined || mode === '1')) stack[stack.length - 1] = n ?? 0
  }
  return stack[stack.length - 1] ?? 0
}

describe('seed contract through the controller with real processes', () => {
  it('confirms the foreground from the tty’s process group: the shell, then a job, then the shell again', async () => {
    const shell = await spawnShell()
    expect(await controller.supportsForegroundProcessEvidence()).toBe(true)
    expect(await controller.confirmShellForeground(shell.id)).toBe(true)
    expect(await controller.confirmForegroundProcess(shell.id)).toBe('sh')
    expect(await controller.inspectProcess(shell.id)).toEqual({ foregroundProcess: 'sh', hasChildProcesses: null })

    controller.write(shell.id, 'sleep 30\n', 'driving')
    await waitFor(async () => ((await controller.confirmForegroundProcess(shell.id)) === 'sleep' ? true : undefined), 'sleep in the foreground')
    expect(await controller.confirmShellForeground(shell.id)).toBe(false)
    expect(await controller.inspectProcess(shell.id, { scanChildProcesses: true })).toEqual({ foregroundProcess: 'sleep', hasChildProcesses: true })
    const rows = await controller.listProcesses('local', { includeForegroundProcessEvidence: true })
    expect(rows.find((row) => row.id === shell.id)?.foregroundProcessEvidence).toEqual({ foregroundProcess: 'sleep', shellForeground: false })

    const [sleeper] = liveChildrenOf(shell.pid)
    process.kill(sleeper!, 'SIGKILL')
    await waitFor(async () => ((await controller.confirmShellForeground(shell.id)) ? true : undefined), 'the shell back in the foreground')
    expect(await controller.confirmForegroundProcess(shell.id)).toBe('sh')
    expect(await controller.stopAndWait(shell.id, { timeoutMs: 3_000 })).toBe(true)
    expect(await controller.confirmForegroundProcess(shell.id)).toBeNull()
    expect(await controller.confirmShellForeground(shell.id)).toBe(false)
  })

  it('resetInputModes restores the view after a full-screen program set modes and was kill -9ed', async () => {
    const shell = await spawnShell()
    const term = new Terminal({ cols: 80, rows: 24, allowProposedApi: true })
    let stream = ''
    const feed = (text: string): Promise<void> => {
      stream += text
      return write(term, text)
    }
    let pending = feed(outputOf(shell.id))
    controller.on('data', (event) => {
      if (event.ptyId === shell.id) pending = pending.then(() => feed(event.data))
    })
    const resets: string[] = []
    controller.on('inputModesReset', (event) => {
      if (event.ptyId === shell.id) resets.push(event.data)
    })
    controller.write(shell.id, "printf '\\033[?1049h\\033[?2004h\\033[?1000h\\033[?1006h\\033[?1h\\033[>1u'; sleep 30\n", 'driving')
    await waitFor(async () => {
      await pending
      return term.modes.bracketedPasteMode && term.modes.mouseTrackingMode === 'vt200' && term.buffer.active.type === 'alternate' ? true : undefined
    }, 'the program’s modes')
    expect(term.modes.applicationCursorKeysMode).toBe(true)
    const sleeper = await waitFor(() => liveChildrenOf(shell.pid)[0], 'the program')
    process.kill(sleeper, 'SIGKILL')
    await waitFor(async () => ((await controller.confirmShellForeground(shell.id)) ? true : undefined), 'the shell back')
    await pending
    // Killed without cleaning up: the view is still in the program's modes.
    expect(term.modes.bracketedPasteMode).toBe(true)
    expect(kittyFlagsAfter(stream)).toBe(1)

    await controller.resetInputModes(shell.id)
    expect(resets).toHaveLength(1)
    await (pending = pending.then(() => feed(resets[0]!)))
    expect(term.modes.bracketedPasteMode).toBe(false)
    expect(term.modes.mouseTrackingMode).toBe('none')
    expect(term.modes.applicationCursorKeysMode).toBe(false)
    expect(term.modes.applicationKeypadMode).toBe(false)
    expect(term.buffer.active.type).toBe('normal')
    expect(kittyFlagsAfter(stream)).toBe(0)
    // Nothing was written to the process: the shell still answers normally.
    controller.write(shell.id, 'echo still-$((20+22))\n', 'driving')
    await waitFor(() => (outputOf(shell.id).includes('still-42') ? true : undefined), 'the shell’s answer')
    term.dispose()
    expect(await controller.stopAndWait(shell.id, { timeoutMs: 3_000 })).toBe(true)
  })

  it('serializeBuffer: null without a renderer (node-pty keeps no screen); a renderer’s snapshot plus data from its seq shows every byte once', async () => {
    const reply = await controller.spawn({
      file: '/bin/sh',
      args: ['-c', 'i=1; while [ $i -le 400 ]; do echo "line-$i"; i=$((i+1)); done; echo DONE; sleep 30'],
      cols: 80,
      rows: 24,
    })
    expect(await controller.serializeBuffer(reply.id)).toBeNull()
    // The renderer: a view fed from the start, which knows the seq it has parsed up to.
    const view = new Terminal({ cols: 80, rows: 24, scrollback: 1_000, allowProposedApi: true })
    const viewSerializer = new SerializeAddon()
    view.loadAddon(viewSerializer)
    let parsedSeq = 0
    let pending = Promise.resolve()
    const deliver = (event: PtyControllerDataEvent): void => {
      pending = pending.then(() => write(view, event.data)).then(() => {
        parsedSeq = event.seq
      })
    }
    for (const event of data.filter((entry) => entry.ptyId === reply.id)) deliver(event)
    const live: PtyControllerDataEvent[] = []
    controller.on('data', (event) => {
      if (event.ptyId !== reply.id) return
      deliver(event)
      live.push(event)
    })
    const generation = controller.getRendererSerializerGeneration(reply.id)
    const waiting = controller.waitForRendererSerializer(reply.id, generation, 5_000)
    controller.registerRendererSerializer(reply.id, ({ scrollbackRows }) => ({
      data: viewSerializer.serialize(scrollbackRows === undefined ? {} : { scrollback: scrollbackRows }),
      cols: view.cols,
      rows: view.rows,
      seq: parsedSeq,
    }))
    expect(await waiting).toBe(true)
    expect(controller.hasRendererSerializer(reply.id)).toBe(true)

    // Re-attach mid-stream: take the snapshot while output still flows.
    // Why wait on parsedSeq: xterm.js parses asynchronously; the renderer reports only what it painted.
    await waitFor(() => (parsedSeq > 0 ? true : undefined), 'the view to paint some output')
    const before = live.length
    const snapshot = (await controller.serializeBuffer(reply.id, { scrollbackRows: 1_000 }))!
    expect(snapshot.seq).toBeGreaterThan(0)
    const attached = new Terminal({ cols: snapshot.cols, rows: snapshot.rows, scrollback: 1_000, allowProposedApi: true })
    await write(attached, snapshot.data)
    await waitFor(() => (outputOf(reply.id).includes('DONE') ? true : undefined), 'the end of the output')
    await pending
    let follow = ''
    for (const event of data.filter((entry) => entry.ptyId === reply.id)) {
      const start = event.seq - event.data.length
      if (event.seq > snapshot.seq!) follow += event.data.slice(Math.max(0, snapshot.seq! - start))
    }
    await write(attached, follow)
    const lines: string[] = []
    for (let row = 0; row < attached.buffer.active.length; row++) {
      const text = attached.buffer.active.getLine(row)?.translateToString(true) ?? ''
      if (text.startsWith('line-')) lines.push(text)
    }
    expect(lines).toEqual(Array.from({ length: 400 }, (_, index) => `line-${index + 1}`))
    expect(live.length).toBeGreaterThanOrEqual(before)
    view.dispose()
    attached.dispose()
    expect(await controller.stopAndWait(reply.id, { timeoutMs: 3_000 })).toBe(true)
  })

  it('slots: concurrent spawns create one process; another controller adopts it (materialized) without spawning; null once it is gone', async () => {
    const slot = { scopeId: 'real', key: 'pane' }
    const [first, second] = await Promise.all([
      controller.spawn({ slot, file: '/bin/sh', args: ['-c', 'sleep 30'] }),
      controller.spawn({ slot, file: '/bin/sh', args: ['-c', 'sleep 30'] }),
    ])
    expect(second).toMatchObject({ id: first.id, pid: first.pid, isReattach: true })
    const other = createPtyController({ provider, store })
    try {
      expect(await other.adoptSlot({ slot: { scopeId: 'real', key: 'empty' } })).toBeNull()
      const listedBefore = (await provider.listProcesses()).length
      const adopted = await other.adoptSlot({ slot })
      expect(adopted).toMatchObject({ materialized: true, result: { id: first.id, pid: first.pid, isReattach: true } })
      expect((await provider.listProcesses()).length).toBe(listedBefore)
      expect(await controller.stopAndWait(first.id, { timeoutMs: 3_000 })).toBe(true)
      expect(await other.adoptSlot({ slot })).toBeNull()
      expect((await provider.listProcesses()).map((row) => row.id)).not.toContain(first.id)
    } finally {
      await other.dispose()
    }
  })
})
