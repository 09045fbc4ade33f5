// An app that restarts and finds its terminal still running, thanks to the pty host.
//
//   npx tsx examples/pty-host-restart.ts
//
// 1. "App 1" (a child Node process) spawns a shell session in a pty host — the host is started on
//    demand, detached, on a private socket — and a short job, and is then killed with SIGKILL, as
//    a crash would.
// 2. The session keeps running in the host and prints while no app is attached; the job ends.
// 3. "App 2" (this process, the restarted app) learns how the job ended (`listExits`, then
//    `forgetExits` once shown), lists the host's running sessions, paints a snapshot of the
//    screen, attaches through a controller (the output it missed is replayed), types a command,
//    and closes the terminal: an operator close, verified. Then it stops the host (`stopPtyHost`).
//
// POSIX only. Exits non-zero if any step does not happen.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createPtyController } from 'ptykit/controller'
import { describeTerminalExitCause } from 'ptykit/exit-cause'
import { createPtyHostProvider, stopPtyHost } from 'ptykit/pty-host'

/** The longest this example may take. */
export const EXAMPLE_DEADLINE_MS = 30_000

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

// ---- App 1: spawn a session, print its id, then wait to be killed ---------------------------------
if (process.argv[2] === '--app-1') {
  const provider = createPtyHostProvider({ socketPath: process.argv[3]!, idleExitMs: 2_000 })
  const { id } = await provider.spawn({
    file: '/bin/sh',
    args: ['-c', 'echo "started by app 1"; sleep 0.5; echo "printed while no app was attached"; exec sh'],
    cols: 80,
    rows: 12,
  })
  const job = await provider.spawn({ file: '/bin/sh', args: ['-c', 'sleep 0.3; exit 3'] })
  console.log(`${id} ${job.id}`)
  setInterval(() => undefined, 1_000)
} else {
  const watchdog = setTimeout(() => {
    console.error(`pty-host-restart example: did not finish within ${EXAMPLE_DEADLINE_MS} ms`)
    process.exit(1)
  }, EXAMPLE_DEADLINE_MS)
  watchdog.unref()

  const dir = mkdtempSync(join(tmpdir(), 'ptykit-example-'))
  const socketPath = join(dir, 'pty-host.sock')
  let app1: ReturnType<typeof spawn> | undefined
  let finished = false
  try {
    // ---- App 1 runs, and crashes -------------------------------------------------------------------
    app1 = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--app-1', socketPath], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let printed = ''
    app1.stdout!.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk))
    const [id, jobId] = (await until(() => (printed.includes('\n') ? printed.trim() : undefined), 'app 1 to spawn its session')).split(' ') as [string, string]
    app1.kill('SIGKILL')
    console.log(`app 1 spawned session ${id} and job ${jobId}, and was killed with SIGKILL`)
    await new Promise((resolve) => setTimeout(resolve, 800))

    // ---- App 2: the restarted app -------------------------------------------------------------------
    const provider = createPtyHostProvider({ socketPath, autoStart: false })
    // What ended while no app was there: an attach cannot tell (an ended session is absent to it).
    const jobExit = await until(async () => (await provider.listExits()).find((exit) => exit.id === jobId), 'the job to end')
    console.log(`the job ended while no app was attached: ${jobExit.cause === undefined ? `code ${jobExit.code}` : describeTerminalExitCause(jobExit.cause)}`)
    if (jobExit.cause?.kind !== 'exited' || jobExit.cause.exitCode !== 3) throw new Error(`expected the job to exit 3, got ${JSON.stringify(jobExit.cause)}`)
    // Dealt with (shown): forget it, so the next start's listExits() does not give it again.
    if ((await provider.forgetExits([jobExit])) !== 1) throw new Error('expected the host to forget the job\'s exit')
    if ((await provider.listExits()).some((exit) => exit.id === jobId)) throw new Error('the forgotten exit is still listed')
    const sessions = await provider.listProcesses()
    console.log(`app 2 sees ${sessions.length} session(s) in the pty host: ${sessions.map((row) => row.id).join(', ')}`)
    const snapshot = await provider.getBufferSnapshot(id)
    console.log(`snapshot at seq ${snapshot?.seq} (${snapshot?.cols}x${snapshot?.rows}):`)
    console.log(`  ${JSON.stringify(snapshot?.data)}`)

    const controller = createPtyController({ provider })
    let output = ''
    controller.on('data', ({ data }) => (output += data))
    const exited = new Promise<string>((resolve) => controller.on('exit', ({ cause }) => resolve(describeTerminalExitCause(cause))))
    if (!(await controller.attach(id))) throw new Error(`could not attach to ${id}`)
    await until(() => (output.includes('printed while no app was attached') ? true : undefined), 'the replay')
    console.log('attached: the output app 1 missed was replayed')
    controller.write(id, 'echo "typed by app 2"\r', 'driving')
    await until(() => (output.includes('\ntyped by app 2') || output.includes('\r\ntyped by app 2') ? true : undefined), 'the echo')
    console.log('app 2 typed a command and saw its output')
    const stopped = await controller.stopAndWait(id)
    console.log(`closed: stop verified ${stopped}; ${await exited}`)
    if (!stopped) process.exitCode = 1
    await controller.dispose()
    await provider.detach()
    // Left alone, the idle host would exit after its idleExitMs; an app's "restart the terminal
    // host" command stops it at once (every session it still held would be stopped too).
    console.log(`host stopped: ${await stopPtyHost({ socketPath })}`)
    finished = true
  } finally {
    // A failed run must not leave app 1, the host or its session behind.
    if (!finished) {
      app1?.kill('SIGKILL')
      await stopPtyHost({ socketPath }).catch(() => undefined)
    }
    rmSync(dir, { recursive: true, force: true })
  }
}
