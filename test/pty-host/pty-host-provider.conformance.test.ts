import { describePtyProviderConformance } from 'ptykit/testing'
import { afterAll } from 'vitest'
import { killHostAndClean, makeSocketDir, providerOn } from './pty-host-test-support.js'

// One host for the whole suite (each check gets a fresh provider, i.e. a fresh app connection).
const { dir, socketPath } = makeSocketDir()
afterAll(() => killHostAndClean(socketPath, dir))

describePtyProviderConformance('pty-host', () => providerOn(socketPath), {
  spawnEcho: (text) => ({ file: '/bin/sh', args: ['-c', `printf '%s\\n' '${text}'`] }),
  spawnLongRunning: () => ({ file: 'cat' }),
  spawnExit: (code) => ({ file: '/bin/sh', args: ['-c', `exit ${code}`] }),
  spawnSignaled: (signal) => ({ file: '/bin/sh', args: ['-c', `kill -${signal} $$`] }),
  killFromOutside: (result) => void process.kill(result.pid!, 'SIGKILL'),
  stopReadingInput: (result) => void process.kill(result.pid!, 'SIGSTOP'),
})
