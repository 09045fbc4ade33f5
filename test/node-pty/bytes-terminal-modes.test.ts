/**
 * Bytes mode keeps the terminal's UTF-8 line editing (issue 18): the PTY is spawned with IUTF8, as
 * in string mode, and its chunks are still the undecoded bytes node-pty read. Real processes for
 * the terminal modes; a stand-in node-pty for a socket that keeps decoding (the session then
 * encodes its strings back to UTF-8).
 */
import { spawn as spawnChild, type ChildProcess } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { createNodePtyProvider, type NodePtyModule, type NodePtyProvider } from 'ptykit/node-pty'
import { expectNoChildLeftBehind, standInTerminal } from './pty-test-support.js'

const opened: NodePtyProvider[] = []
const idle: ChildProcess[] = []
// The idle children are stopped (and reaped: their exit seen) inside the cleanup, before the
// check for children left behind — a separate hook could run after the check, or kill without
// waiting for the reap, and the check then saw a child still dying (seen under load).
expectNoChildLeftBehind(async () => {
  for (const provider of opened.splice(0)) await provider.dispose()
  await Promise.all(
    idle.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) {
            resolve()
            return
          }
          child.once('exit', () => resolve())
          child.kill('SIGKILL')
        }),
    ),
  )
})

function provider(output: 'string' | 'bytes', loadNodePty?: () => Promise<NodePtyModule>): NodePtyProvider {
  const created = createNodePtyProvider({ output, ...(loadNodePty === undefined ? {} : { loadNodePty, drainOutputAtExit: false, platform: 'linux' }) })
  opened.push(created)
  return created
}

/** Runs `script` under `/bin/sh` in a PTY of `output` mode, writes `input` at once, and returns what it printed (as UTF-8). */
async function run(output: 'string' | 'bytes', script: string, input = ''): Promise<{ text: string; chunkKinds: Set<string> }> {
  const pty = provider(output)
  const parts: Buffer[] = []
  const chunkKinds = new Set<string>()
  pty.onBytes((event) => {
    chunkKinds.add(Buffer.isBuffer(event.bytes) ? 'Buffer' : typeof event.bytes)
    parts.push(Buffer.from(event.bytes))
  })
  pty.onData((event) => {
    chunkKinds.add(typeof event.data)
    parts.push(Buffer.from(event.data, 'utf8'))
  })
  const exited = new Promise<void>((resolve) => pty.onExit(() => resolve()))
  const { id } = await pty.spawn({ file: '/bin/sh', args: ['-c', script] })
  if (input !== '') pty.write(id, input)
  await exited
  return { text: Buffer.concat(parts).toString('utf8'), chunkKinds }
}

describe('bytes mode keeps IUTF8', () => {
  it.each(['string', 'bytes'] as const)('a %s-mode PTY has iutf8 set', async (output) => {
    const { text, chunkKinds } = await run(output, "stty -a | tr ' ;' '\\n\\n' | grep -x -e iutf8 -e -iutf8")
    expect(text.trim()).toBe('iutf8')
    expect([...chunkKinds]).toEqual([output === 'bytes' ? 'Buffer' : 'string'])
  })

  it('a canonical-mode erase removes a whole multi-byte character in bytes mode', async () => {
    // Typed ahead: "é", one erase (DEL), "x", Enter. With IUTF8 the kernel's line editor erases
    // both bytes of "é" and the line read is "x" (78); without it, one byte stays (c3 78).
    const { text } = await run('bytes', 'IFS= read -r line; printf "%s" "$line" | od -An -tx1', 'é\u007fx\r')
    const dump = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => /^[0-9a-f]{2}( [0-9a-f]{2})*$/.test(line))
    expect(dump).toEqual(['78'])
  })

  it('still delivers the bytes undecoded: invalid UTF-8 arrives as it was written', async () => {
    const pty = provider('bytes')
    const chunks: Buffer[] = []
    pty.onBytes((event) => chunks.push(Buffer.from(event.bytes)))
    const exited = new Promise<void>((resolve) => pty.onExit(() => resolve()))
    await pty.spawn({ file: '/bin/sh', args: ['-c', "printf '\\303\\251\\377\\376\\200'"] })
    await exited
    expect(Buffer.concat(chunks).toString('hex')).toBe('c3a9fffe80')
  })
})

describe('a bytes-mode terminal whose socket keeps decoding', () => {
  it('has its string chunks encoded back to UTF-8 bytes, in order', async () => {
    const child = spawnChild('/bin/sleep', ['60'], { stdio: 'ignore' })
    idle.push(child)
    let fire: ((chunk: string) => void) | undefined
    let exit: (() => void) | undefined
    const module: NodePtyModule = {
      spawn(_file, _args, options) {
        const stand = standInTerminal(child.pid as number, options)
        exit = () => stand.exit({ exitCode: 0 })
        // A socket whose readable state cannot be told to stop decoding.
        Object.defineProperty(stand.terminal, '_socket', {
          value: {
            _readableState: Object.defineProperty({}, 'decoder', {
              get: () => ({}),
              set: () => {
                throw new Error('read-only')
              },
            }),
          },
        })
        stand.terminal.onData = ((listener: (chunk: string) => void) => {
          fire = listener
          return { dispose() {} }
        }) as never
        return stand.terminal
      },
    }
    const pty = provider('bytes', () => Promise.resolve(module))
    const received: unknown[] = []
    pty.onBytes((event) => received.push(event.bytes))
    const exited = new Promise<void>((resolve) => pty.onExit(() => resolve()))
    await pty.spawn({ file: '/bin/sh' })
    fire?.('é€')
    fire?.('x')
    exit?.()
    await exited
    expect(received.every((chunk) => Buffer.isBuffer(chunk))).toBe(true)
    expect(received.map((chunk) => (chunk as Buffer).toString('hex'))).toEqual([Buffer.from('é€').toString('hex'), '78'])
  })
})
