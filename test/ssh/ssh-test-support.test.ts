/**
 * The SSH tests find and kill the programs they left on the loopback server by command line. Found
 * by review (helper-188): ssh-provider.failures.test.ts ran a machine-wide `pkill -f "sleep
 * 3<pid>.<ms>"`, whose `.` is a regular expression's any character — another process (another
 * run's, another clone's) whose command line differs there was killed too.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, killRunning, processesRunning } from './ssh-test-support.js'

const started: ChildProcess[] = []
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL')
})

function sleeper(seconds: string): number {
  const child = spawn('sleep', [seconds], { stdio: 'ignore' })
  started.push(child)
  return child.pid!
}

describe('SSH test support: a program found by its command line, as written', () => {
  it('finds and kills `sleep 3<pid>.<ms>` only, not a program whose command line differs at the point', async () => {
    const program = `sleep 3${process.pid}.125`
    const target = sleeper(`3${process.pid}.125`)
    // The same name with another character where the point is: `pgrep -f`'s `.` matched it.
    const bystander = sleeper(`3${process.pid}0125`)
    await waitFor(() => (processesRunning(program).length > 0 ? true : undefined), `${program} to run`)
    expect(processesRunning(program)).toEqual([target])
    killRunning(program)
    await waitFor(() => (isAlive(target) ? undefined : true), `${program} to end`)
    expect(isAlive(bystander)).toBe(true)
  })
})
