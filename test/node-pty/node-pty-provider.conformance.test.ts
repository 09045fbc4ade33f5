import { createNodePtyProvider } from 'ptykit/node-pty'
import type { PtySpawnResult } from 'ptykit/contracts'
import { describePtyProviderConformance } from 'ptykit/testing'

// Real processes: `sh -c` for echoes and exit codes, `cat` for a process that runs (and reads its
// input) until it is stopped.
const drivers = {
  spawnEcho: (text: string) => ({ file: '/bin/sh', args: ['-c', `printf '%s\\n' '${text}'`] }),
  spawnLongRunning: () => ({ file: 'cat' }),
  spawnExit: (code: number) => ({ file: '/bin/sh', args: ['-c', `exit ${code}`] }),
  spawnSignaled: (signal: number) => ({ file: '/bin/sh', args: ['-c', `kill -${signal} $$`] }),
  killFromOutside: (result: PtySpawnResult) => void process.kill(result.pid!, 'SIGKILL'),
  // A stopped `cat` reads nothing: the provider holds what the full terminal input cannot take.
  stopReadingInput: (result: PtySpawnResult) => void process.kill(result.pid!, 'SIGSTOP'),
  // It refuses `cdw`, `sessionID`, `evn`… before it forks (provider-spawn.ts).
  capabilities: { refusesMisspeltSpawnOptions: true },
}

describePtyProviderConformance('node-pty', () => createNodePtyProvider(), drivers)

// A wrapper host: every exit resolves to unknown/host_status_unavailable.
describePtyProviderConformance(
  'node-pty (wrapper host)',
  () => createNodePtyProvider({ hostReportsChildExitStatus: false }),
  drivers,
)
