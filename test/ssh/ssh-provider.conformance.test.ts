import { createSshProvider } from 'ptykit/ssh'
import { describePtyProviderConformance } from 'ptykit/testing'
import { sshOptions, useSshd } from './ssh-test-support.js'

// The conformance suite against a real OpenSSH server on loopback, one connection per check.
const sshd = useSshd()

describePtyProviderConformance('ssh (OpenSSH on loopback)', () => createSshProvider(sshOptions(sshd())), {
  spawnEcho: (text) => ({ file: '/bin/sh', args: ['-c', `printf '%s\\n' '${text}'`] }),
  spawnLongRunning: () => ({ file: 'cat' }),
  spawnExit: (code) => ({ file: '/bin/sh', args: ['-c', `exit ${code}`] }),
  spawnSignaled: (signal) => ({ file: '/bin/sh', args: ['-c', `kill -${signal} $$`] }),
  // Loopback: the remote pid is a pid of this machine.
  killFromOutside: (result) => void process.kill(result.pid!, 'SIGKILL'),
  stopReadingInput: (result) => void process.kill(result.pid!, 'SIGSTOP'),
  // Its stop closes the channel at its last step when the program's exit was not reported by then:
  // held writes may settle provider_refused_write / transport_lost (docs/ssh-provider.md).
  // It refuses a misspelt option (`cdw`, `sessionID`, `evn`…) before it opens a channel (ssh-spawn.ts).
  capabilities: { stopClosesTransportFirst: true, refusesMisspeltSpawnOptions: true },
  timeoutMs: 10_000,
})
