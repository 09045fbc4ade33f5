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
import { createPtyController, type PtyTerminal } from 'ptykit/controller'
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
// Each terminal is a handle (`spawnTerminal`): its own events, input, size and end.
const provider = createNodePtyProvider()
const controller = createPtyController({ provider })

// Faults the controller survived (a listener that threw, a provider that failed a stop…).
controller.on('error', (error) => console.error(`  controller error (${error.code}): ${error.message}`))

// --- 2. A view per terminal ----------------------------------------------------------------------
//
// A terminal view reads `terminal.output()` with `for await`. Each pull tells flow control that the
// previous chunk was rendered: a program that floods faster than the view keeps up is paused above
// a high watermark and resumed once the loop catches up — no ack code here. The loop ends after
// the last chunk before the exit, so a view never renders output after it showed "process ended".

/** A stand-in for a terminal widget: prints complete lines, and can wait for some text. */
type TerminalView = {
  /** Everything rendered so far. */
  readonly screen: () => string
  /** Resolve once the screen contains `text`; reject after {@link OUTPUT_WAIT_MS}. */
  waitFor(text: string): Promise<void>
  /** Resolves when the output ended (the process exited), with every chunk rendered. */
  readonly closed: Promise<void>
}

function openView(terminal: PtyTerminal): TerminalView {
  const label = terminal.id.slice(0, 8)
  let screen = ''
  let partial = ''
  const waiters = new Set<() => void>()
  const print = (line: string): void => console.log(`  [${label}] ${line}`)
  const render = (data: string): void => {
    screen += data
    const lines = (partial + data).replace(/\r\n?/g, '\n').split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) print(line)
    for (const waiter of [...waiters]) waiter()
  }
  const closed = (async () => {
    for await (const chunk of terminal.output()) render(chunk)
    if (partial.length > 0) print(partial)
  })()
  return {
    screen: () => screen,
    closed,
    waitFor(text) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!screen.includes(text)) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`Timed out after ${OUTPUT_WAIT_MS} ms waiting for ${JSON.stringify(text)}`))
        }, OUTPUT_WAIT_MS)
        waiters.add(check)
        check()
      })
    },
  }
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
  const shell = await controller.spawnTerminal({
    file: '/bin/sh',
    cols: 100,
    rows: 30,
    env: { PS1: '$ ' },
    command: `printf 'ready: %s\\n' "$((40 + 2))"`,
  })
  // Subscribing right after the spawn also gets what the shell printed while it was starting.
  const shellView = openView(shell)
  await shellView.waitFor('ready: 42')

  // --- 4. Forward the user's keystrokes ----------------------------------------------------------
  //
  // Every write names why it happens: 'driving' (the handle's default) is a person, or a client
  // acting for one. `write` is true when the bytes were handed to the provider (bytes it holds for
  // later — behind the spawn's `command`, or for a program that does not read — are still dropped
  // if the PTY ends first); `writeWithSettlement` says accepted, refused (provably not sent) or
  // unverifiable (nobody can tell) — use it for that answer, and for remote hosts.
  const settlement = await shell.writeWithSettlement('echo "sum: $((1 + 2))"\r')
  console.log(`  (write settled: ${settlement.kind})`)
  await shellView.waitFor('sum: 3')

  // The tab was resized by the user; the handle knows its size (a view would follow it).
  shell.resize(120, 40)
  console.log(`  (resized to ${shell.cols}x${shell.rows})`)

  // --- 5. The user closes the tab ----------------------------------------------------------------
  //
  // `stop` marks the stop first (so the exit is attributed to the operator, not mistaken for a
  // crash), hangs up, escalates to a kill after a grace period, and resolves `true` only when the
  // process is verifiably gone. (`kill()` is the fire-and-forget form.) `exited` resolves with
  // the exit and its settled cause, whether it came before or after the await.
  const verified = await shell.stop({ timeoutMs: OUTPUT_WAIT_MS })
  const shellExit = await shell.exited
  await shellView.closed
  console.log(`  ended: ${describeTerminalExitCause(shellExit.cause)}`)
  console.log(`  stop verified: ${verified}; deliberate: ${isDeliberateTerminalExit(shellExit.cause)}`)
  if (!verified) throw new Error('Terminal 1: stop() could not verify the stop')
  expectCause('Terminal 1', shellExit.cause, { kind: 'operator_close' })

  // A closed terminal refuses input — it is never silently swallowed.
  if (shell.write('too late\r')) throw new Error('Terminal 1 accepted a write after its exit')

  // --- 6. A task terminal that fails on its own ------------------------------------------------
  //
  // `await using`: whatever happens in this block, the terminal is stopped (and the stop verified)
  // when the block is left — here it has already ended on its own.
  console.log('\nTerminal 2: a build task that fails')
  {
    await using task = await controller.spawnTerminal({ file: '/bin/sh', args: ['-c', 'echo "compiling…"; exit 2'] })
    const taskView = openView(task)
    const taskExit = await task.exited
    await taskView.closed
    console.log(`  ended: ${describeTerminalExitCause(taskExit.cause)}`)
    // A status bar would show the sentence; a retry policy would branch on the kind.
    expectCause('Terminal 2', taskExit.cause, { kind: 'exited', exitCode: 2 })
    if (!taskView.screen().includes('compiling…')) throw new Error('Terminal 2 lost its output')
  }

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
