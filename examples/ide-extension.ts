// What an IDE extension does with ptykit: open a terminal, stream its output to a view, forward
// the user's keystrokes, close it — and say truthfully why each terminal ended.
//
//   npx tsx examples/ide-extension.ts
//
// Two terminals, real shells through node-pty:
//
//   1. an interactive shell: a startup command, some user input, then the user closes the tab
//      → operator_close, "Terminal closed by operator request";
//   2. a task terminal that fails on its own with exit 2
//      → exited(2), "Agent process exited with code 2".
//
// The "view" is stdout, and the checks at the end make the script exit non-zero if either
// terminal did not end the way it should. POSIX only (it runs /bin/sh); no TTY needed.
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { describeTerminalExitCause, isDeliberateTerminalExit, type TerminalExitCause } from 'ptykit/exit-cause'
import { createNodePtyProvider } from 'ptykit/node-pty'

/** The longest this example may take: each step takes milliseconds, so anything near this is a hang. */
export const EXAMPLE_DEADLINE_MS = 20_000

/** How long to wait for a piece of output before giving up on it. */
export const OUTPUT_WAIT_MS = 5_000

const watchdog = setTimeout(() => {
  console.error(`ide-extension example: did not finish within ${EXAMPLE_DEADLINE_MS} ms`)
  process.exit(1)
}, EXAMPLE_DEADLINE_MS)
watchdog.unref()

// --- 1. One provider and one controller for the whole extension ---------------------------------
//
// The provider runs the PTYs (here: node-pty, on this machine). The controller is what the rest of
// the extension talks to: it routes calls, fences stale processes, attributes closes, paces output.
const provider = createNodePtyProvider()
const controller = createPtyController({ provider })

// --- 2. Wire the events once, before the first spawn ---------------------------------------------
//
// A terminal view would append `data` to its buffer. Every `data` event of a PTY arrives before its
// `exit`, so a view never renders output after it showed "process ended".
const screens = new Map<string, string>()
const view = createLineView()
controller.on('data', ({ ptyId, data }) => {
  screens.set(ptyId, (screens.get(ptyId) ?? '') + data)
  view.write(ptyId, data)
  // Flow control: tell the controller when output has been *rendered*. If a program floods
  // faster than the view keeps up, the controller pauses it above a high watermark of
  // unacknowledged characters and resumes it once acknowledgements bring it below a low one.
  controller.acknowledgeData(ptyId, data.length)
})

// `exit` carries the cause, already settled by the operator-close rule: a terminal the extension
// closed is `operator_close`, whatever the signal that ended it.
const exits = new Map<string, PtyControllerExitEvent>()
controller.on('exit', (event) => {
  exits.set(event.ptyId, event)
  view.flush(event.ptyId)
  console.log(`  [${event.ptyId.slice(0, 8)}] ended: ${describeTerminalExitCause(event.cause)}`)
})

// Faults the controller survived (a listener that threw, a provider that failed a stop…).
controller.on('error', (error) => console.error(`  controller error (${error.code}): ${error.message}`))

// --- Two small helpers an extension would have anyway ------------------------------------------

/** A stand-in for a terminal widget: prints each PTY's complete lines, prefixed with its id. */
function createLineView(): { write(ptyId: string, data: string): void; flush(ptyId: string): void } {
  const partial = new Map<string, string>()
  const print = (ptyId: string, line: string): void => console.log(`  [${ptyId.slice(0, 8)}] ${line}`)
  return {
    write(ptyId, data) {
      const lines = ((partial.get(ptyId) ?? '') + data).replace(/\r\n?/g, '\n').split('\n')
      partial.set(ptyId, lines.pop() ?? '')
      for (const line of lines) print(ptyId, line)
    },
    flush(ptyId) {
      const rest = partial.get(ptyId) ?? ''
      if (rest.length > 0) print(ptyId, rest)
      partial.delete(ptyId)
    },
  }
}

/** Resolve once the terminal's screen contains `text`; reject after {@link OUTPUT_WAIT_MS}. */
function waitForOutput(ptyId: string, text: string): Promise<void> {
  return waitFor(() => (screens.get(ptyId) ?? '').includes(text), `output ${JSON.stringify(text)}`)
}

/** Resolve with the terminal's exit event (it may already have arrived). */
async function waitForExit(ptyId: string): Promise<PtyControllerExitEvent> {
  await waitFor(() => exits.has(ptyId), 'the exit')
  return exits.get(ptyId) as PtyControllerExitEvent
}

function waitFor(condition: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!condition()) return
      cleanup()
      resolve()
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`Timed out after ${OUTPUT_WAIT_MS} ms waiting for ${what}`))
    }, OUTPUT_WAIT_MS)
    const cleanup = (): void => {
      clearTimeout(timer)
      controller.off('data', check)
      controller.off('exit', check)
    }
    controller.on('data', check)
    controller.on('exit', check)
    check()
  })
}

function expectCause(terminal: string, actual: TerminalExitCause, expected: TerminalExitCause): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${terminal}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`)
  }
}

try {
  // --- 3. Open an interactive terminal ---------------------------------------------------------
  //
  // `file`/`args` name the program (default: the user's shell). `command` is typed into the shell
  // once it runs, with input kind 'launch' — the way an extension starts a task in a visible shell.
  console.log('Terminal 1: an interactive shell')
  const shell = await controller.spawn({
    file: '/bin/sh',
    cols: 100,
    rows: 30,
    env: { PS1: '$ ' },
    command: `printf 'ready: %s\\n' "$((40 + 2))"`,
  })
  await waitForOutput(shell.id, 'ready: 42')

  // --- 4. Forward the user's keystrokes ----------------------------------------------------------
  //
  // Every write names why it happens: 'driving' is a person (or a client acting for one). `write`
  // is true only when the provider accepted the bytes; `writeWithSettlement` says accepted,
  // refused (provably not sent) or unverifiable (nobody can tell) — use it for remote hosts.
  const settlement = await controller.writeWithSettlement(shell.id, 'echo "sum: $((1 + 2))"\r', 'driving')
  console.log(`  (write settled: ${settlement.kind})`)
  await waitForOutput(shell.id, 'sum: 3')

  // The tab was resized by the user.
  controller.resize(shell.id, 120, 40)

  // --- 5. The user closes the tab ----------------------------------------------------------------
  //
  // `stopAndWait` marks the stop first (so the exit is attributed to the operator, not mistaken for
  // a crash), hangs up, escalates to a kill after a grace period, and resolves `true` only when the
  // process is verifiably gone. (`kill(id)` is the fire-and-forget form.)
  const verified = await controller.stopAndWait(shell.id, { deadlineMs: Date.now() + OUTPUT_WAIT_MS })
  const shellExit = await waitForExit(shell.id)
  console.log(`  stop verified: ${verified}; deliberate: ${isDeliberateTerminalExit(shellExit.cause)}`)
  if (!verified) throw new Error('Terminal 1: stopAndWait could not verify the stop')
  expectCause('Terminal 1', shellExit.cause, { kind: 'operator_close' })

  // A closed terminal refuses input — it is never silently swallowed.
  if (controller.write(shell.id, 'too late\r', 'driving')) throw new Error('Terminal 1 accepted a write after its exit')

  // --- 6. A task terminal that fails on its own ------------------------------------------------
  console.log('\nTerminal 2: a build task that fails')
  const task = await controller.spawn({ file: '/bin/sh', args: ['-c', 'echo "compiling…"; exit 2'] })
  const taskExit = await waitForExit(task.id)
  // A status bar would show the sentence; a retry policy would branch on the kind.
  expectCause('Terminal 2', taskExit.cause, { kind: 'exited', exitCode: 2 })
  if (!(screens.get(task.id) ?? '').includes('compiling…')) throw new Error('Terminal 2 lost its output')

  console.log('\nBoth terminals ended the way they should.')
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  // --- 7. On deactivate: stop whatever is left, then release the provider ----------------------
  await controller.dispose()
  await provider.dispose()
  clearTimeout(watchdog)
}
