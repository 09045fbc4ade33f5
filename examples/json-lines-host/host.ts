// The PTY host child of examples/custom-provider.ts: a small process that runs real PTYs with
// `createNodePtyProvider()` and serves them over JSON lines on stdin/stdout (see ./protocol.ts).
//
// Run by the provider as `node --import tsx examples/json-lines-host/host.ts`; a real application
// would ship it compiled and run `node host.js`. It is deliberately a *lossy* relay: exits cross
// the wire with their code and incarnation only, never their cause — like an older daemon. That is
// the point of the example: the controller on the other side must not read a bare 0 as success.
//
// stdout carries only protocol lines; diagnostics go to stderr. When stdin closes (the provider
// disposed it, or the host application died), every PTY is stopped and the host exits, so a PTY
// never outlives both of them.
import { createInterface } from 'node:readline'
import type { ProviderSpawnOptions, PtyListProcessesOptions, PtyShutdownOptions } from 'ptykit/contracts'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { decodeHostRequest, encodeLine, toWireError, type HostMessage, type HostRequest } from './protocol.js'

const provider = createNodePtyProvider()

function send(message: HostMessage): void {
  // Why no backpressure handling: stdout to a pipe is synchronous on Linux and macOS, so lines
  // leave in the order they were produced — data before exit, exit before the stop's reply.
  process.stdout.write(encodeLine(message))
}

provider.onData((event) => {
  send(
    event.incarnationId === undefined
      ? { type: 'data', ptyId: event.id, data: event.data }
      : { type: 'data', ptyId: event.id, data: event.data, incarnationId: event.incarnationId },
  )
})

provider.onExit((event) => {
  // The lossy part, on purpose: `event.cause` (which node-pty's provider built from the signal) is
  // dropped. A non-finite code cannot cross JSON; `null` tells the receiver it was malformed.
  const code = Number.isFinite(event.code) ? event.code : null
  send(
    event.incarnationId === undefined
      ? { type: 'exit', ptyId: event.id, code }
      : { type: 'exit', ptyId: event.id, code, incarnationId: event.incarnationId },
  )
})

function stringParam(params: Record<string, unknown>, name: string): string {
  const value = params[name]
  if (typeof value !== 'string') {
    throw new TypeError(`Expected the \`${name}\` parameter to be a string, got ${JSON.stringify(value)} (${typeof value})`)
  }
  return value
}

function numberParam(params: Record<string, unknown>, name: string): number {
  const value = params[name]
  if (typeof value !== 'number') {
    throw new TypeError(`Expected the \`${name}\` parameter to be a number, got ${JSON.stringify(value)} (${typeof value})`)
  }
  return value
}

// One handler per method. Each returns plain data (or throws, and the error crosses as a WireError
// that keeps its `code` — so an attach-only spawn's `pty_absent` stays a typed absence).
async function handle(request: HostRequest): Promise<unknown> {
  const { params } = request
  switch (request.method) {
    case 'spawn': {
      // The wire carried only plain data; the callback is replaced by a `committed` message.
      const options = { ...params } as ProviderSpawnOptions
      return provider.spawn({ ...options, onPtySpawnCommitted: () => send({ type: 'committed', requestId: request.id }) })
    }
    case 'write':
      return provider.write(stringParam(params, 'id'), stringParam(params, 'data'))
    case 'resize':
      return provider.resize(stringParam(params, 'id'), numberParam(params, 'cols'), numberParam(params, 'rows'))
    case 'shutdown': {
      const { id: _id, ...options } = params
      await provider.shutdown(stringParam(params, 'id'), options as PtyShutdownOptions)
      return null
    }
    case 'pause':
      provider.pauseProducer(stringParam(params, 'id'))
      return null
    case 'resume':
      provider.resumeProducer(stringParam(params, 'id'))
      return null
    case 'list':
      return provider.listProcesses(params as PtyListProcessesOptions)
    case 'probe':
      return provider.probeLiveness(stringParam(params, 'id'))
    case 'getCwd':
      return provider.getCwd(stringParam(params, 'id'))
    case 'getForegroundProcess':
      return provider.getForegroundProcess(stringParam(params, 'id'))
    case 'dispose':
      await provider.dispose()
      return null
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })

lines.on('line', (line) => {
  const request = decodeHostRequest(line)
  if (request === null) {
    process.stderr.write(`json-lines host: ignoring a malformed line: ${line.slice(0, 200)}\n`)
    return
  }
  handle(request).then(
    (result) => send({ type: 'reply', id: request.id, ok: true, result: result ?? null }),
    (error: unknown) => send({ type: 'reply', id: request.id, ok: false, error: toWireError(error) }),
  )
})

lines.on('close', () => {
  // The provider closed our stdin (or died): stop every PTY, then leave.
  provider.dispose().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`json-lines host: dispose failed: ${String(error)}\n`)
      process.exit(1)
    },
  )
})
