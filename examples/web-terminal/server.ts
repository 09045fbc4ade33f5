// The web terminal's server: serves one page (xterm.js, bundled with esbuild at start) and drives
// real PTYs for it over a WebSocket, through ptykit's default controller and the node-pty provider.
//
//   npm run example:web        (see main.ts; prints the URL with its token)
//
// Terminals belong to the server, not to a page: a reload (or a second window) re-attaches to every
// terminal still known, repainting each one's current screen from the server's headless mirror.
import { readFile } from 'node:fs/promises'
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo, Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build, stop as stopEsbuild } from 'esbuild'
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { WebSocketServer, type WebSocket } from 'ws'
import { checkUpgradeAccess, createAccessToken, parseRequestTarget } from './access.js'
import { MAX_CLIENT_MESSAGE_BYTES } from './protocol.js'
import { PageConnection } from './page-connection.js'
import { createTerminalRegistry } from './terminal-registry.js'

/** The only interface the server listens on: a terminal server must not be reachable from the network. */
export const LOOPBACK_HOST = '127.0.0.1'

/** The path of the WebSocket endpoint. */
export const WEBSOCKET_PATH = '/ws'

/** Options of {@link startWebTerminalServer}. */
export type WebTerminalServerOptions = {
  /** TCP port on 127.0.0.1; default 0 (any free port). */
  port?: number
  /** The access token; default: 256 random bits. Pass one only in tests that need to know it. */
  token?: string
  /** The shell a terminal without a command runs; default `$SHELL`, else `/bin/sh`. */
  shell?: string
  /** Working directory of new terminals; default the server's. */
  cwd?: string
  /** Extra environment of new terminals. */
  env?: Record<string, string>
  /** Where refused connections and faults are reported; default `console.error`. */
  log?: (line: string) => void
}

/** A running web terminal server. */
export type WebTerminalServer = {
  /** The page's URL, token included: whoever has it has a shell. */
  url: string
  /** `http://127.0.0.1:<port>`: the only origin whose page may connect. */
  origin: string
  /** The access token every WebSocket must present. */
  token: string
  /**
   * Stop every terminal (verified stops; each page is sent `closed` for the terminals it showed),
   * close every socket (1001, or dropped when a page does not close it in time) and the HTTP server.
   */
  close(): Promise<void>
}

export type { TerminalRegistry } from './terminal-registry.js'

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url))

/** Start the server on 127.0.0.1; resolves once it listens and the page is bundled. */
export async function startWebTerminalServer(options: WebTerminalServerOptions = {}): Promise<WebTerminalServer> {
  const log = options.log ?? ((line: string) => console.error(line))
  const token = options.token ?? createAccessToken()
  const assets = await bundlePage()

  const provider = createNodePtyProvider()
  const controller = createPtyController({ provider })
  controller.on('error', (error) => log(`controller: ${error.code}: ${error.message}`))
  const registry = createTerminalRegistry(controller, options)

  const http = createServer((request, response) => serveAsset(assets, request, response, origin))
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES })
  const connections = new Set<PageConnection>()
  /** Set once `close` was called: the shutdown in progress. */
  let closing: Promise<void> | undefined
  http.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (closing !== undefined) {
      // Shutting down: a page connecting now would be shown terminals being stopped.
      socket.end(`HTTP/1.1 503 ${STATUS_CODES[503]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
      return
    }
    const refusal = checkUpgradeAccess(request, { origin, path: WEBSOCKET_PATH, token })
    if (refusal !== undefined) {
      log(`web-terminal: refused a WebSocket: ${refusal.reason}`)
      socket.end(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`)
      return
    }
    sockets.handleUpgrade(request, socket, head, (webSocket: WebSocket) => {
      const connection = new PageConnection(webSocket, registry, log)
      connections.add(connection)
      webSocket.on('close', () => connections.delete(connection))
    })
  })

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port ?? 0, LOOPBACK_HOST, () => resolve())
  })
  const { port } = http.address() as AddressInfo
  const origin = `http://${LOOPBACK_HOST}:${port}`

  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    close: () =>
      (closing ??= (async () => {
        // First: from here a spawn still in flight is stopped when it answers, never kept. Each
        // terminal is stopped while its page is still connected, so the page learns the verdict
        // (`closed`) instead of guessing from a dropped socket.
        await registry.stopAll()
        registry.dispose()
        // Then the pages are told the server is going away (1001). A page that stopped reading is
        // dropped after a short bound: it must not hold the shutdown.
        await Promise.all([...connections].map((connection) => connection.shutDown()))
        sockets.close()
        await new Promise<void>((resolve) => http.close(() => resolve()))
        await controller.dispose() // stops every PTY it still owns (a stop that failed above), each a verified stop
        await provider.dispose()
      })()),
  }
}

type PageAssets = Map<string, { type: string; body: string }>

/** Bundle the page with esbuild (in memory) and load its static files. */
async function bundlePage(): Promise<PageAssets> {
  const require = createRequire(import.meta.url)
  const result = await build({
    entryPoints: [here('./page/main.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    tsconfig: here('./page/tsconfig.json'),
    logLevel: 'silent',
  })
  // The page is bundled once: end esbuild's service process now rather than leave it running.
  await stopEsbuild()
  const script = result.outputFiles[0]?.text ?? ''
  const [html, style, xtermStyle] = await Promise.all([
    readFile(here('./page/index.html'), 'utf8'),
    readFile(here('./page/style.css'), 'utf8'),
    readFile(require.resolve('@xterm/xterm/css/xterm.css'), 'utf8'),
  ])
  return new Map([
    ['/', { type: 'text/html; charset=utf-8', body: html }],
    ['/app.js', { type: 'text/javascript; charset=utf-8', body: script }],
    ['/style.css', { type: 'text/css; charset=utf-8', body: style }],
    ['/xterm.css', { type: 'text/css; charset=utf-8', body: xtermStyle }],
  ])
}

function serveAsset(assets: PageAssets, request: IncomingMessage, response: ServerResponse, origin: string): void {
  const path = parseRequestTarget(request, origin)?.pathname
  if (path === undefined) {
    response.writeHead(400).end() // a target that is no URL (`GET http://[/`): answered, never thrown
    return
  }
  const asset = request.method === 'GET' ? assets.get(path) : undefined
  if (asset === undefined || `http://${request.headers.host ?? ''}` !== origin) {
    response.writeHead(404).end()
    return
  }
  response.writeHead(200, {
    'content-type': asset.type,
    'cache-control': 'no-store',
    // The token is in the page's URL: never send it on as a referrer.
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    // xterm.js sets inline styles; nothing else is inline, and the page talks only to this server.
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src ${origin.replace('http', 'ws')}; frame-ancestors 'none'`,
  })
  response.end(asset.body)
}
