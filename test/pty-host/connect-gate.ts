import type * as net from 'node:net'

/**
 * A seam for connect races: a test file mocks `node:net` with {@link gatedNet} (its
 * `createConnection` / `connect` pass every connection through unless {@link connectGate}`.hold`
 * answers a promise for the path: that connection's connect goes out once the promise settles).
 * The client has then done everything before its connect (checked the socket, read the secret),
 * so a test can let a host start or exit in between.
 *
 * @example
 * ```ts
 * vi.mock('node:net', async (importOriginal) => (await import('./connect-gate.js')).gatedNet(await importOriginal()))
 * ```
 */
export const connectGate: {
  /** Asked at each connection to a path; a promise holds its connect until it settles, `null` lets it go. */
  hold: ((path: string) => Promise<unknown> | null) | null
} = { hold: null }

/** `node:net` with its connect functions passing through {@link connectGate}. */
export function gatedNet(actual: typeof net): typeof net {
  const createConnection = ((...args: unknown[]): net.Socket => {
    const options = args[0]
    const wait = typeof options === 'object' && options !== null && 'path' in options ? connectGate.hold?.((options as net.IpcNetConnectOpts).path) : null
    if (wait === null || wait === undefined) return (actual.createConnection as (...passed: unknown[]) => net.Socket)(...args)
    // What `net.createConnection(options)` does (its `onread` goes to the constructor), with the connect deferred.
    const socket = new actual.Socket(options as net.SocketConstructorOpts)
    void wait.then(() => socket.connect(options as net.IpcSocketConnectOpts))
    return socket
  }) as typeof net.createConnection
  return { ...actual, createConnection, connect: createConnection }
}
