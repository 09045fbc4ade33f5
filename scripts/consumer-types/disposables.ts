// Compiled by `scripts/check-consumer-types.mjs` against the packed declarations, in every module
// setting but the oldest TypeScript (`await using` is TypeScript 5.2): every public object with a
// `dispose()`, `close()` or `return()` a scope ends with is (Async)Disposable, so `using` /
// `await using` compiles (TS2850 / TS2851 otherwise).
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createPtyHostProvider, startPtyHost } from 'ptykit/pty-host'
import { createSshProvider } from 'ptykit/ssh'

export async function checkDisposables(socketPath: string): Promise<void> {
  await using host = await startPtyHost({ socketPath })
  await using hosted = createPtyHostProvider({ socketPath, autoStart: false })
  await using ssh = createSshProvider({ host: 'build-box', username: 'me', privateKey: 'key', knownHostsPath: '/known_hosts' })
  await using local = createNodePtyProvider()
  await using controller = createPtyController({ providers: { local, hosted, ssh } })
  await using terminal = await controller.spawnTerminal({})
  using registration = controller.registerRendererSerializer(terminal.id, () => null)
  using subscription = terminal.onData(() => undefined)
  await using output = terminal.output()
  void [host, registration, subscription, await output.next()]
}
