import { createConnection, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy between the provider and the fixture's sshd that can lose the server's replies: a
 * link whose far end still gets every request while nothing comes back — the way a link dies
 * mid-spawn, the server having run what it was asked to.
 */
export type SshLinkProxy = {
  /** The proxy's port on 127.0.0.1 (known_hosts names the sshd's: verify the host key with `hostVerifier`). */
  readonly port: number
  /**
   * From now on, once the client has sent `clientChunks` more chunks (a spawn sends its channel
   * open, its pty request and its `exec` request one round trip apart: 3 chunks) and the server
   * has then sent `serverChunksToPass` more, hold every byte the server sends — it never reaches
   * the client. The client's bytes still go through.
   */
  holdServerAfter(clientChunks: number, serverChunksToPass?: number): void
  /** Whether the hold asked for by {@link SshLinkProxy.holdServerAfter} has begun (what it lets through has passed). */
  readonly holding: boolean
  /** Close every connection through the proxy at once (both ends), and stop holding. */
  dropAll(): void
  /** Close the proxy and its connections. */
  close(): Promise<void>
}

/** Start a {@link SshLinkProxy} in front of `target`. */
export async function startSshLinkProxy(target: { host: string; port: number }): Promise<SshLinkProxy> {
  const sockets = new Set<Socket>()
  // null: pass everything; else what is left to pass before the hold begins.
  let hold: { clientChunks: number; serverChunks: number } | null = null
  const holding = (): boolean => hold !== null && hold.clientChunks === 0 && hold.serverChunks === 0
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.host, port: target.port })
    upstream.setNoDelay(true)
    client.setNoDelay(true)
    sockets.add(client).add(upstream)
    client.on('data', (chunk) => {
      upstream.write(chunk)
      if (hold !== null && hold.clientChunks > 0) hold.clientChunks--
    })
    upstream.on('data', (chunk) => {
      if (holding()) return
      if (hold !== null && hold.clientChunks === 0) hold.serverChunks--
      client.write(chunk)
    })
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined)
      socket.on('close', () => {
        sockets.delete(socket)
        client.destroy()
        upstream.destroy()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const dropAll = (): void => {
    hold = null
    for (const socket of sockets) socket.destroy()
  }
  return {
    port,
    holdServerAfter(clientChunks, serverChunksToPass = 0) {
      hold = { clientChunks, serverChunks: serverChunksToPass }
    },
    get holding() {
      return holding()
    },
    dropAll,
    close: async () => {
      dropAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
