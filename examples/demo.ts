/**
 * ptykit demo: real shells that end four ways, and why each one ended.
 *
 * A controller over the node-pty provider spawns four PTYs — a clean `exit 0`, an `exit 3`, a shell
 * that SIGKILLs itself, and a process that ignores SIGHUP and is stopped by the operator — streams
 * their output, and prints each PTY's exit cause next to what raw node-pty reports for the same
 * command. Raw node-pty says `exitCode: 0` for the SIGKILL; ptykit says `signaled(9)`.
 *
 * Run it with `npm run demo`. It exits 0 when every cause is the expected one, 1 otherwise.
 *
 * @packageDocumentation
 */
import { readFileSync, readdirSync } from 'node:fs'
import { spawn as rawSpawn, type IPty } from 'node-pty'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { describeTerminalExitCause, type TerminalExitCause } from 'ptykit/exit-cause'
import { createNodePtyProvider } from 'ptykit/node-pty'

/** How long the demo waits for any one event before it gives up (a healthy run takes ~1 s in all). */
const DEMO_EVENT_TIMEOUT_MS = 10_000

/** How long raw node-pty's `kill()` (SIGHUP) gets before the demo escalates to SIGTERM itself. */
const RAW_HANGUP_WAIT_MS = 300

/** The operator's deadline for the stop of the HUP-ignoring process (ptykit escalates within it). */
const OPERATOR_STOP_DEADLINE_MS = 5_000

type DemoCase = {
  /** Short name, used as the output prefix. */
  name: string
  /** The shell script. */
  script: string
  /** The cause ptykit must report. */
  expected: TerminalExitCause
  /** Stopped by the operator once this text was printed. */
  stopAfter?: string
}

const CASES: readonly DemoCase[] = [
  { name: 'clean', script: 'echo "all done"; exit 0', expected: { kind: 'exited', exitCode: 0 } },
  { name: 'exit-3', script: 'echo "something failed"; exit 3', expected: { kind: 'exited', exitCode: 3 } },
  { name: 'kill-9', script: 'echo "SIGKILLing myself"; kill -9 $$', expected: { kind: 'signaled', signal: 9 } },
  {
    name: 'stopped',
    script: "trap '' HUP; echo 'ignoring SIGHUP, sleeping'; sleep 30",
    expected: { kind: 'operator_close' },
    stopAfter: 'sleeping',
  },
]

const useColor = process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined
const paint = (code: string) => (text: string) => (useColor ? `\u001b[${code}m${text}\u001b[0m` : text)
const bold = paint('1')
const dim = paint('2')
const red = paint('31')
const green = paint('32')
const yellow = paint('33')
const cyan = paint('36')
const PREFIX_COLORS = [cyan, yellow, paint('35'), paint('34')]

/** Reject after `ms` with a message naming what was awaited. */
function withTimeout<T>(promise: Promise<T>, what: string, ms = DEMO_EVENT_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function showCause(cause: TerminalExitCause): string {
  switch (cause.kind) {
    case 'exited':
      return `exited(${cause.exitCode})`
    case 'signaled':
      return `signaled(${cause.signal})`
    case 'operator_close':
      return 'operator_close'
    case 'unknown':
      return `unknown/${cause.reason}`
  }
}

/** Writes each PTY's output line by line, prefixed with its name. */
class PrefixedOutput {
  readonly #partial = new Map<string, string>()

  write(name: string, color: (text: string) => string, data: string): void {
    const lines = ((this.#partial.get(name) ?? '') + data).split(/\r?\n/)
    this.#partial.set(name, lines.pop() ?? '')
    for (const line of lines) process.stdout.write(`${color(`[${name}]`.padEnd(10))} ${line.replace(/\r/g, '')}\n`)
  }

  flush(name: string, color: (text: string) => string): void {
    const rest = this.#partial.get(name)
    if (rest !== undefined && rest.length > 0) process.stdout.write(`${color(`[${name}]`.padEnd(10))} ${rest}\n`)
    this.#partial.delete(name)
  }
}

/** Run every case through the controller; return each case's exit event. */
async function runWithPtykit(): Promise<PtyControllerExitEvent[]> {
  const provider = createNodePtyProvider()
  const controller = createPtyController({ provider })
  const output = new PrefixedOutput()
  const nameOf = new Map<string, { name: string; color: (text: string) => string }>()
  const texts = new Map<string, string>()
  const exits = new Map<string, (event: PtyControllerExitEvent) => void>()
  const earlyExits = new Map<string, PtyControllerExitEvent>()
  const waiters = new Set<() => void>()

  controller.on('data', ({ ptyId, data }) => {
    texts.set(ptyId, (texts.get(ptyId) ?? '') + data)
    const who = nameOf.get(ptyId)
    if (who !== undefined) output.write(who.name, who.color, data)
    for (const wake of [...waiters]) wake()
  })
  controller.on('exit', (event) => {
    const who = nameOf.get(event.ptyId)
    if (who !== undefined) output.flush(who.name, who.color)
    const resolve = exits.get(event.ptyId)
    if (resolve === undefined) earlyExits.set(event.ptyId, event)
    else resolve(event)
  })

  const waitForText = (ptyId: string, text: string): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!(texts.get(ptyId) ?? '').includes(text)) return
        waiters.delete(check)
        resolve()
      }
      waiters.add(check)
      check()
    })

  try {
    return await Promise.all(
      CASES.map(async (demoCase, index) => {
        const reply = await controller.spawn({ file: '/bin/sh', args: ['-c', demoCase.script] })
        const color = PREFIX_COLORS[index % PREFIX_COLORS.length] ?? cyan
        nameOf.set(reply.id, { name: demoCase.name, color })
        // Output that arrived before the id was known is replayed now.
        const early = texts.get(reply.id)
        if (early !== undefined) output.write(demoCase.name, color, early)
        const exited = new Promise<PtyControllerExitEvent>((resolve) => {
          const already = earlyExits.get(reply.id)
          if (already !== undefined) resolve(already)
          else exits.set(reply.id, resolve)
        })
        if (demoCase.stopAfter !== undefined) {
          await withTimeout(waitForText(reply.id, demoCase.stopAfter), `"${demoCase.stopAfter}" from ${demoCase.name}`)
          process.stdout.write(`${dim(`[${demoCase.name}]`.padEnd(10))} ${dim('operator: stopAndWait()')}\n`)
          const verified = await controller.stopAndWait(reply.id, { deadlineMs: Date.now() + OPERATOR_STOP_DEADLINE_MS })
          if (!verified) throw new Error(`the stop of ${demoCase.name} was not verified`)
        }
        return withTimeout(exited, `the exit of ${demoCase.name}`)
      }),
    )
  } finally {
    await controller.dispose()
    await provider.dispose()
  }
}

type RawOutcome = { exitCode: number; signal: number | undefined; note: string }

/** Run one case with raw node-pty: what it reports, and what it leaves behind. */
function runRaw(demoCase: DemoCase): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    let pty: IPty
    try {
      pty = rawSpawn('/bin/sh', ['-c', demoCase.script], { name: 'xterm', cols: 80, rows: 24, cwd: process.cwd(), env: process.env })
    } catch (error) {
      reject(error)
      return
    }
    let text = ''
    let note = ''
    let escalation: NodeJS.Timeout | undefined
    const timer = setTimeout(() => {
      pty.kill('SIGKILL')
      reject(new Error(`raw node-pty: no exit from ${demoCase.name}`))
    }, DEMO_EVENT_TIMEOUT_MS)
    pty.onData((data) => {
      text += data
      if (demoCase.stopAfter !== undefined && escalation === undefined && text.includes(demoCase.stopAfter)) {
        // What a host without ptykit does: kill() — a SIGHUP to the leader only, which it ignores.
        pty.kill()
        escalation = setTimeout(() => {
          note = 'kill() ignored, SIGTERM sent'
          pty.kill('SIGTERM')
        }, RAW_HANGUP_WAIT_MS)
      }
    })
    pty.onExit(({ exitCode, signal }) => {
      clearTimeout(timer)
      if (escalation !== undefined) clearTimeout(escalation)
      // The leader's `sleep` child was signalled by nobody: look for it, report it, end it.
      const orphans = demoCase.stopAfter === undefined ? [] : findOrphanedSleeps(pty.pid)
      for (const pid of orphans) process.kill(pid, 'SIGKILL')
      if (orphans.length > 0) note += `; orphan left: sleep ${orphans.join(', ')}`
      resolve({ exitCode, signal, note })
    })
  })
}

/** Live processes still in the dead leader's session (only Linux's /proc tells; elsewhere none are found). */
function findOrphanedSleeps(leaderPid: number): number[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  return entries.filter((entry) => {
    if (!/^\d+$/.test(entry)) return false
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      return false
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[3]) === leaderPid && fields[0] !== 'Z'
  }).map(Number)
}

function sameCause(a: TerminalExitCause, b: TerminalExitCause): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Pad to a visible width, ignoring colour codes. */
function pad(text: string, width: number): string {
  const visible = text.replace(/\u001b\[[0-9;]*m/g, '').length
  return text + ' '.repeat(Math.max(0, width - visible))
}

async function main(): Promise<number> {
  process.stdout.write(`${bold('ptykit demo')}: four real shells, four endings\n\n`)
  const started = Date.now()
  const exits = await runWithPtykit()
  const raw: RawOutcome[] = []
  for (const demoCase of CASES) raw.push(await runRaw(demoCase))

  const header = ['PTY', 'ptykit cause', 'describeTerminalExitCause', 'raw node-pty onExit', '']
  const rows = CASES.map((demoCase, index) => {
    const exit = exits[index]!
    const rawOutcome = raw[index]!
    const ok = sameCause(exit.cause, demoCase.expected)
    return {
      ok,
      cells: [
        demoCase.name,
        ok ? green(showCause(exit.cause)) : red(`${showCause(exit.cause)} (expected ${showCause(demoCase.expected)})`),
        describeTerminalExitCause(exit.cause),
        dim(`{ exitCode: ${rawOutcome.exitCode}, signal: ${String(rawOutcome.signal)} }${rawOutcome.note === '' ? '' : ' *'}`),
        ok ? green('✓') : red('✗'),
      ],
    }
  })
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row.cells[column]!.replace(/\u001b\[[0-9;]*m/g, '').length)),
  )
  const line = (cells: string[]): string => `  ${cells.map((cell, column) => pad(cell, widths[column]!)).join('  ').trimEnd()}\n`
  process.stdout.write(`\n${line(header.map(bold))}`)
  for (const row of rows) process.stdout.write(line(row.cells))
  // Why below the table: the notes are long, and the table must fit a 100-column terminal.
  CASES.forEach((demoCase, index) => {
    const note = raw[index]!.note
    if (note !== '') process.stdout.write(dim(`  * raw node-pty, ${demoCase.name}: ${note}\n`))
  })

  const failures = rows.filter((row) => !row.ok).length
  process.stdout.write(
    `\n${failures === 0 ? green('All four causes are the expected ones') : red(`${failures} cause(s) differ from the expected`)} ${dim(`(${Date.now() - started} ms)`)}\n`,
  )
  return failures === 0 ? 0 : 1
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`${red('demo failed:')} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  },
)
