#!/usr/bin/env node
// Runs shell commands side by side and fails when any of them fails: `npm test` uses it to run
// the CPU-bound checks (tsc, the package build, typedoc) while other steps wait on something else —
// one tsc beside the package build's single-threaded declaration pass, typedoc beside the test files
// that wait on real processes, sshd and Chromium. The work is the same as one after the other; only
// idle CPU gets used.
//
//   node scripts/run-concurrently.mjs 'npm run a' 'npm run b && npm run c'
//
// Output stays readable: the first command's output streams live; each other command's output is
// held and printed whole, in the order the commands were given, once it has finished and everything
// before it has been printed. Each block ends with the command's status and wall time. Exits with
// the first non-zero status, after every command has finished (none is killed midway: a check that
// fails is reported next to the others' results).
import { spawn } from 'node:child_process'

const commands = process.argv.slice(2)
if (commands.length === 0) {
  console.error('usage: node scripts/run-concurrently.mjs <command> [<command>…]')
  process.exit(2)
}

/** Start one command; resolves with its status, its held output (unless live) and its wall time. */
function start(command, live) {
  const startedAt = performance.now()
  const child = spawn(command, { shell: true, stdio: ['ignore', live ? 'inherit' : 'pipe', live ? 'inherit' : 'pipe'] })
  const held = []
  if (!live) {
    child.stdout.on('data', (chunk) => held.push(chunk))
    child.stderr.on('data', (chunk) => held.push(chunk))
  }
  return new Promise((resolve) => {
    child.on('error', (error) => held.push(Buffer.from(`${error.stack ?? error}\n`)))
    child.on('close', (code, signal) => {
      const status = code ?? (signal === null ? 1 : 128)
      resolve({ command, status, signal, held: Buffer.concat(held), seconds: (performance.now() - startedAt) / 1000 })
    })
  })
}

const runs = commands.map((command, index) => start(command, index === 0))
let failed = 0
for (const run of runs) {
  const { command, status, signal, held, seconds } = await run
  if (held.length > 0) {
    process.stdout.write(`\n── ${command} ──\n`)
    process.stdout.write(held)
  }
  const outcome = status === 0 ? 'ok' : signal !== null ? `killed by ${signal}` : `failed with status ${status}`
  process.stdout.write(`── ${command}: ${outcome} (${seconds.toFixed(1)} s)\n`)
  if (status !== 0 && failed === 0) failed = status
}
process.exitCode = failed
