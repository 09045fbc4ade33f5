// A host app with two hosts: PTYs on this machine (node-pty) and on another one over SSH.
//
//   PTYKIT_SSH_HOST=build-box PTYKIT_SSH_USER=ci PTYKIT_SSH_KEY=~/.ssh/id_ed25519 \
//   PTYKIT_SSH_KNOWN_HOSTS=~/.ssh/known_hosts npx tsx examples/ssh-host.ts
//
// Environment:
//   PTYKIT_SSH_HOST         the server (required)
//   PTYKIT_SSH_PORT         its port (default 22)
//   PTYKIT_SSH_USER         the login user (default: $USER)
//   PTYKIT_SSH_KEY          a private key file; without it, the agent at SSH_AUTH_SOCK is used
//   PTYKIT_SSH_PASSPHRASE   the key's passphrase, if it has one
//   PTYKIT_SSH_KNOWN_HOSTS  the known_hosts file that vouches for the server (default ~/.ssh/known_hosts)
//
// It runs the same three programs on both hosts at once — an exit code, a self-inflicted SIGTERM,
// and a process that ignores HUP and TERM, stopped by the operator — and prints the cause the
// controller settled for each. The causes are the same on both hosts: SSH carries `exit-status`
// and `exit-signal`, so nothing is lost across the wire. It exits non-zero if they differ.
// examples/ssh-host.test.ts runs it against a throwaway sshd.
import { readFileSync } from 'node:fs'
import { homedir, userInfo } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createPtyController, type PtyControllerExitEvent } from 'ptykit/controller'
import { describeTerminalExitCause } from 'ptykit/exit-cause'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createSshProvider, type SshProviderOptions } from 'ptykit/ssh'

/** One program's settled cause on each host. */
export type SshHostDemoRow = { program: string; local: string; ssh: string }

const PROGRAMS: Array<{ program: string; args: string[]; stop: boolean }> = [
  { program: 'exit 3', args: ['-c', 'exit 3'], stop: false },
  { program: 'kill -TERM $$', args: ['-c', 'kill -TERM $$'], stop: false },
  { program: 'ignores HUP+TERM, stopped', args: ['-c', "trap '' HUP TERM; echo READY; while :; do sleep 0.2; done"], stop: true },
]

/** Run the demo against `ssh` (provider options) and return one row per program. */
export async function runSshHostDemo(ssh: SshProviderOptions): Promise<SshHostDemoRow[]> {
  const sshProvider = createSshProvider({ ...ssh, hostId: 'ssh:remote' })
  const localProvider = createNodePtyProvider()
  const controller = createPtyController({ providers: { local: localProvider, 'ssh:remote': sshProvider } })
  const exits = new Map<string, PtyControllerExitEvent>()
  const exited = new Map<string, () => void>()
  const output = new Map<string, string>()
  controller.on('data', ({ ptyId, data }) => {
    output.set(ptyId, (output.get(ptyId) ?? '') + data)
    controller.acknowledgeData(ptyId, data.length)
  })
  controller.on('exit', (event) => {
    exits.set(event.ptyId, event)
    exited.get(event.ptyId)?.()
  })
  const waitForExit = (id: string): Promise<PtyControllerExitEvent> =>
    exits.has(id) ? Promise.resolve(exits.get(id)!) : new Promise((resolve) => exited.set(id, () => resolve(exits.get(id)!)))
  const waitForReady = async (id: string): Promise<void> => {
    while (!(output.get(id) ?? '').includes('READY')) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  try {
    return await Promise.all(
      PROGRAMS.map(async ({ program, args, stop }) => {
        const causes = await Promise.all(
          (['local', 'ssh:remote'] as const).map(async (hostId) => {
            const { id } = await controller.spawn({ hostId, file: '/bin/sh', args })
            if (stop) {
              await waitForReady(id)
              await controller.stopAndWait(id)
            }
            return describeTerminalExitCause((await waitForExit(id)).cause)
          }),
        )
        const [local = '', remote = ''] = causes
        return { program, local, ssh: remote }
      }),
    )
  } finally {
    await controller.dispose()
    await Promise.all([sshProvider.dispose(), localProvider.dispose()])
  }
}

function optionsFromEnv(env: NodeJS.ProcessEnv): SshProviderOptions | null {
  const host = env['PTYKIT_SSH_HOST']
  if (host === undefined || host === '') return null
  const expand = (file: string): string => (file.startsWith('~/') ? path.join(homedir(), file.slice(2)) : file)
  const options: SshProviderOptions = {
    host,
    port: Number(env['PTYKIT_SSH_PORT'] ?? 22),
    username: env['PTYKIT_SSH_USER'] ?? userInfo().username,
    knownHostsPath: expand(env['PTYKIT_SSH_KNOWN_HOSTS'] ?? '~/.ssh/known_hosts'),
  }
  const key = env['PTYKIT_SSH_KEY']
  if (key !== undefined && key !== '') options.privateKey = readFileSync(expand(key), 'utf8')
  else if (env['SSH_AUTH_SOCK'] !== undefined) options.agent = env['SSH_AUTH_SOCK']
  const passphrase = env['PTYKIT_SSH_PASSPHRASE']
  if (passphrase !== undefined && passphrase !== '') options.passphrase = passphrase
  return options
}

async function main(): Promise<void> {
  const options = optionsFromEnv(process.env)
  if (options === null) {
    console.error('Set PTYKIT_SSH_HOST (and PTYKIT_SSH_USER, PTYKIT_SSH_KEY or SSH_AUTH_SOCK, PTYKIT_SSH_KNOWN_HOSTS): see the top of examples/ssh-host.ts')
    process.exitCode = 2
    return
  }
  const rows = await runSshHostDemo(options)
  for (const row of rows) console.log(`${row.program.padEnd(28)} local: ${row.local}\n${''.padEnd(28)} ssh:   ${row.ssh}`)
  if (rows.some((row) => row.local !== row.ssh)) {
    console.error('The causes differ between the hosts.')
    process.exitCode = 1
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
