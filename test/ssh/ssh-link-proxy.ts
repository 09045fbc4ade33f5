import { createConnection, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy between the provider and the fixture's sshd that can lose the server's replies: a
 * link whose far end still gets every request while nothing comes back — the way a link dies
 * mid-spawn, the server having run what it was asked to. It can also freeze the link (nothing
 * crosses either way until it thaws: a stalled route, a proxy that stops forwarding) and delay
 * every chunk (a slow link).
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
  /**
   * Stop forwarding in both directions: every byte either end sends from now on waits in the
   * proxy (the TCP connections stay up) until {@link SshLinkProxy.thaw}.
   */
  freeze(): void
  /** Forward again, in order, what waited while frozen. */
  thaw(): void
  /** Delay every chunk by `oneWayMs` in each direction from now on (order kept): a round trip of twice that. */
  setDelay(oneWayMs: number): void
  /** Close every connection through the proxy at once (both ends), and stop holding. */
  dropAll(): void
  /** Close the proxy and its connections. */
  close(): Promise<void>
}

/** One direction of one connection: chunks wait here for their time (a delay) or for a thaw. */
type Lane = { queue: Array<{ chunk: Buffer; due: number }>; timer: NodeJS.Timeout | null; to: Socket }

/** Start a {@link SshLinkProxy} in front of `target`. */
export async function startSshLinkProxy(target: { host: string; port: number }): Promise<SshLinkProxy> {
  const sockets = new Set<Socket>()
  const lanes = new Set<Lane>()
  // null: pass everything; else what is left to pass before the hold begins.
  let hold: { clientChunks: number; serverChunks: number } | null = null
  let frozen = false
  let delayMs = 0
  const holding = (): boolean => hold !== null && hold.clientChunks === 0 && hold.serverChunks === 0
  /** Write what is due on `lane`, in order; wake again for the next chunk's time. */
  const pump = (lane: Lane): void => {
    if (lane.timer !== null) clearTimeout(lane.timer)
    lane.timer = null
    if (frozen) return
    const now = Date.now()
    while (lane.queue.length > 0 && lane.queue[0]!.due <= now) lane.to.write(lane.queue.shift()!.chunk)
    if (lane.queue.length > 0) lane.timer = setTimeout(() => pump(lane), lane.queue[0]!.due - now)
  }
  const lane = (to: Socket): Lane => {
    const created: Lane = { queue: [], timer: null, to }
    lanes.add(created)
    return created
  }
  const send = (into: Lane, chunk: Buffer): void => {
    into.queue.push({ chunk, due: Date.now() + delayMs })
    if (into.queue.length === 1 || delayMs === 0) pump(into)
  }
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.host, port: target.port })
    upstream.setNoDelay(true)
    client.setNoDelay(true)
    sockets.add(client).add(upstream)
    const toServer = lane(upstream)
    const toClient = lane(client)
    client.on('data', (chunk: Buffer) => {
      send(toServer, chunk)
      if (hold !== null && hold.clientChunks > 0) hold.clientChunks--
    })
    upstream.on('data', (chunk: Buffer) => {
      if (holding()) return
      if (hold !== null && hold.clientChunks === 0) hold.serverChunks--
      send(toClient, chunk)
    })
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined)
      socket.on('close', () => {
        sockets.delete(socket)
        for (const gone of [toServer, toClient]) {
          if (gone.timer !== null) clearTimeout(gone.timer)
          lanes.delete(gone)
        }
        client.destroy()
        upstream.destroy()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const dropAll = (): void => {
    hold = null
    frozen = false
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
    freeze() {
      frozen = true
    },
    thaw() {
      frozen = false
      for (const each of lanes) pump(each)
    },
    setDelay(oneWayMs) {
      delayMs = oneWayMs
    },
    dropAll,
    close: async () => {
      dropAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
