/**
 * A host of an older ptykit, made of a real host behind a proxy: the tests of what the app does
 * with a host that lacks a newer feature (a method, a field) rewrite the welcome as such a host
 * sends it and treat the app's messages as such a host would.
 */
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Socket } from 'node:net'
import { encodeFrame } from '../../src/pty-host/frame-codec.js'
import { makeSocketDir } from './pty-host-test-support.js'

/** One message from the app, decoded (a request, a notification). */
export type AppMessage = { type?: unknown; method?: unknown; params?: Record<string, unknown> }

/** What the older host does with a message from the app: take it as sent, take it rewritten, or drop the connection. */
export type OlderHostAnswer = 'forward' | 'drop-connection' | { rewritten: AppMessage }

/**
 * Listen on a fresh private socket in front of the host on `realSocketPath` (its secret copied):
 * `welcome` edits the host's welcome in place, `onAppMessage` decides each message of the app.
 * Closed and removed by `cleanups`.
 */
export async function olderHostInFrontOf(
  cleanups: (() => Promise<void>)[],
  realSocketPath: string,
  older: { welcome(welcome: Record<string, unknown>): void; onAppMessage(message: AppMessage): OlderHostAnswer },
): Promise<{ socketPath: string }> {
  const { dir, socketPath } = makeSocketDir()
  writeFileSync(`${socketPath}.secret`, readFileSync(`${realSocketPath}.secret`), { mode: 0o600 })
  const sockets = new Set<Socket>()
  const server = createServer((app) => {
    const host = createConnection(realSocketPath)
    sockets.add(app).add(host)
    app.on('error', () => undefined)
    host.on('error', () => undefined)
    app.on('close', () => host.destroy())
    host.on('close', () => app.destroy())
    let welcomed = false
    let fromHost = Buffer.alloc(0)
    host.on('data', (chunk: Buffer) => {
      if (welcomed) return void app.write(chunk)
      fromHost = Buffer.concat([fromHost, chunk])
      const length = fromHost.length >= 4 ? fromHost.readUInt32BE(0) : Infinity
      if (fromHost.length < 4 + length) return
      const welcome = JSON.parse(fromHost.subarray(4, 4 + length).toString('utf8')) as Record<string, unknown>
      older.welcome(welcome)
      welcomed = true
      app.write(encodeFrame(welcome))
      app.write(fromHost.subarray(4 + length))
    })
    let fromApp = Buffer.alloc(0)
    app.on('data', (chunk: Buffer) => {
      fromApp = Buffer.concat([fromApp, chunk])
      while (fromApp.length >= 4 && fromApp.length >= 4 + fromApp.readUInt32BE(0)) {
        const frame = fromApp.subarray(0, 4 + fromApp.readUInt32BE(0))
        fromApp = fromApp.subarray(frame.length)
        const answer = older.onAppMessage(JSON.parse(frame.subarray(4).toString('utf8')) as AppMessage)
        if (answer === 'drop-connection') return void app.destroy()
        host.write(answer === 'forward' ? frame : encodeFrame(answer.rewritten))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  chmodSync(socketPath, 0o600)
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    rmSync(dir, { recursive: true, force: true })
  })
  return { socketPath }
}
