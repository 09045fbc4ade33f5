// The web terminal, end to end in a real browser: Debian's Chromium (headless, driven by
// playwright-core pointed at the system binary) talks to the example server, which drives real
// PTYs through ptykit's controller and the node-pty provider.
import { existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { expectNoChildLeftBehind, isDead, waitFor } from '../../test/node-pty/pty-test-support.js'
import { PROTOCOL_VIOLATION_CLOSE_CODE } from './protocol.js'
import { startWebTerminalServer, type WebTerminalServer } from './server.js'

/** Where Debian's `chromium` package installs the browser. */
const CHROMIUM = '/usr/bin/chromium'

/** How long the page may take to show something a command printed (a shared 2-core machine). */
const SHOW_TIMEOUT_MS = 10_000

const artifacts = fileURLToPath(new URL('../../test-artifacts/', import.meta.url))

let server: WebTerminalServer
let browser: Browser
let page: Page
const serverLog: string[] = []
/** Every frame the page sent over its WebSockets, parsed. */
const sentByPage: { type?: string; id?: string }[] = []

expectNoChildLeftBehind(async () => {
  await browser?.close()
  await server?.close()
})

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`The browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\``)
  }
  server = await startWebTerminalServer({ shell: '/bin/sh', env: { PS1: '$ ' }, log: (line) => serverLog.push(line) })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  page = await browser.newPage({ viewport: { width: 1000, height: 600 } })
  page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => sentByPage.push(JSON.parse(String(payload)) as { type?: string; id?: string })))
  await page.goto(server.url)
  await page.waitForSelector('body[data-connection="open"]')
}, 60_000)

/** Open a terminal from the page's toolbar (a shell, or `command`) and answer its id once it is shown. */
async function openTerminal(command = ''): Promise<string> {
  const before = await terminalIds()
  await page.fill('#command', command)
  await page.click('#open')
  const id = await waitFor(async () => (await terminalIds()).find((candidate) => !before.includes(candidate)), 'the new tab')
  await page.waitForSelector(`.terminal-pane[data-id="${id}"]:not([hidden]) .xterm-rows`)
  return id
}

function terminalIds(): Promise<string[]> {
  return page.$$eval('.terminal-pane', (sections) => sections.map((section) => (section as HTMLElement).dataset['id'] ?? ''))
}

/** Type into the terminal as a user does: focus it, then keys. */
async function typeLine(id: string, line: string): Promise<void> {
  await page.click(`.terminal-pane[data-id="${id}"] .xterm-screen`)
  await page.keyboard.type(line)
  await page.keyboard.press('Enter')
}

/** The rendered rows of a terminal, as the user sees them. */
function screenText(id: string): Promise<string> {
  return page.locator(`.terminal-pane[data-id="${id}"] .xterm-rows`).innerText()
}

/** Wait until the rendered screen matches `pattern`; answers the match. */
async function waitForScreen(id: string, pattern: RegExp): Promise<RegExpMatchArray> {
  return waitFor(async () => (await screenText(id)).match(pattern) ?? undefined, `${pattern} on the screen`, SHOW_TIMEOUT_MS)
}

function attribute(id: string, name: string): Promise<string | null> {
  return page.locator(`.terminal-pane[data-id="${id}"]`).getAttribute(name)
}

async function waitForState(id: string, state: string, timeoutMs = SHOW_TIMEOUT_MS): Promise<void> {
  await page.waitForSelector(`.terminal-pane[data-id="${id}"][data-state="${state}"]`, { timeout: timeoutMs, state: 'attached' })
}

describe('web terminal in Chromium', () => {
  it('a paste longer than one frame reaches the program whole, and the page stays connected', async () => {
    // 40 000 ASCII chars and 10 000 CJK ones: 70 000 bytes, more than one 64 KiB frame holds.
    // Before: the server closed the page's socket (1009), and the paste was lost.
    const id = await openTerminal("stty raw -echo; head -c 70000 | wc -c")
    await page.click(`.terminal-pane[data-id="${id}"] .xterm-screen`)
    await page.evaluate(
      ({ id, text }) => {
        const area = document.querySelector(`.terminal-pane[data-id="${id}"] textarea`) as HTMLTextAreaElement
        const clipboard = new DataTransfer()
        clipboard.setData('text/plain', text)
        area.dispatchEvent(new ClipboardEvent('paste', { clipboardData: clipboard, bubbles: true, cancelable: true }))
      },
      { id, text: 'b'.repeat(40_000) + '\u6f22'.repeat(10_000) },
    )
    await waitForScreen(id, /^\s*70000\s*$/m)
    expect(await page.locator('body').getAttribute('data-connection')).toBe('open')
  })

  it('a command longer than the server runs is refused in the page, and the connection stays open', async () => {
    const before = await terminalIds()
    // Typed or pasted, the field holds at most 4096 chars (maxlength); a value set by a script is
    // not cut, and the page refuses it before it reaches the server. Before: the server closed the
    // page's socket (1008), every tab "disconnected".
    await page.fill('#command', `echo ${'x'.repeat(5_000)}`)
    expect(await page.$eval('#command', (input) => (input as HTMLInputElement).value.length)).toBe(4_096)
    await page.$eval('#command', (input) => {
      ;(input as HTMLInputElement).value = `echo ${'x'.repeat(5_000)}`
    })
    await page.click('#open')
    const refusal = await page.$eval('#command', (input) => (input as HTMLInputElement).validationMessage)
    expect(refusal).toContain('the server runs at most 4096')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await page.locator('body').getAttribute('data-connection')).toBe('open')
    expect(await terminalIds()).toEqual(before)
    await page.fill('#command', '')
  })

  it("a mouse click past column 95 reaches the program as xterm.js's raw bytes (onBinary), byte for byte", async () => {
    // Mouse reporting in the default (X10) encoding: each report is ESC [ M and three bytes of
    // 32 + button, column and row (1-based), so a column past 95 is a byte of 0x80 or more. xterm.js
    // hands such a report to onBinary; sent as text, the program got its UTF-8 (two bytes each).
    // READY on the screen: the terminal is raw and xterm.js reports the mouse (it parsed the mode first).
    const id = await openTerminal("stty raw -echo -iexten; printf '\\033[?1000hREADY\\n'; exec od -An -tx1 -v -w6")
    await waitForScreen(id, /READY/)
    const cols = Number(await attribute(id, 'data-cols'))
    const rows = Number(await attribute(id, 'data-rows'))
    expect(cols, 'a terminal wide enough for a column past 95').toBeGreaterThan(96)
    const screen = await page.locator(`.terminal-pane[data-id="${id}"] .xterm-screen`).boundingBox()
    if (screen === null) throw new Error('the terminal is not shown')
    const column = cols - 2 // 0-based
    const row = Math.min(3, rows - 1)
    const sentBefore = sentByPage.length
    await page.mouse.click(screen.x + ((column + 0.5) * screen.width) / cols, screen.y + ((row + 0.5) * screen.height) / rows)
    const hex = (byte: number): string => byte.toString(16).padStart(2, '0')
    const press = ['1b', '5b', '4d', hex(32 + 0), hex(32 + column + 1), hex(32 + row + 1)].join(' ')
    const release = ['1b', '5b', '4d', hex(32 + 3), hex(32 + column + 1), hex(32 + row + 1)].join(' ')
    expect(32 + column + 1).toBeGreaterThanOrEqual(0x80)
    await waitForScreen(id, new RegExp(release))
    expect((await screenText(id)).replace(/\s+/g, ' ')).toContain(press)
    const binary = sentByPage.slice(sentBefore).filter((frame) => frame.type === 'binary' && frame.id === id)
    expect(binary.length, 'the reports went as binary frames').toBeGreaterThanOrEqual(2)
    expect(sentByPage.slice(sentBefore).filter((frame) => frame.type === 'input' && frame.id === id)).toEqual([])
    expect(await page.locator('body').getAttribute('data-connection')).toBe('open')
  })

  it('draws what the shell prints for typed keys', async () => {
    const id = await openTerminal()
    await typeLine(id, 'echo hi')
    await waitForScreen(id, /^hi\s*$/m)
  })

  it('fits the terminal to the window, and the PTY reports the new size', async () => {
    const id = await openTerminal()
    let reads = 0
    const readBack = async (): Promise<string> => {
      const marker = `SIZE${++reads}`
      await typeLine(id, `echo "${marker}:$(stty size)"`)
      return (await waitForScreen(id, new RegExp(`${marker}:(\\d+ \\d+)`)))[1] ?? ''
    }
    const shown = async (): Promise<string> => `${await attribute(id, 'data-rows')} ${await attribute(id, 'data-cols')}`
    const before = await shown()
    expect(await readBack()).toBe(before)

    await page.setViewportSize({ width: 700, height: 400 })
    const after = await waitFor(async () => ((await shown()) !== before ? shown() : undefined), 'the refit')
    expect(await readBack()).toBe(after)
    await page.setViewportSize({ width: 1000, height: 600 })
  })

  it('shows the exit cause in words once the process ends, on the status line and the tab', async () => {
    const id = await openTerminal()
    await typeLine(id, 'echo about to fail')
    await waitForScreen(id, /^about to fail\s*$/m)
    await typeLine(id, 'exit 3')
    await waitForState(id, 'ended')
    // What ended (the tab's title: the shell) and why — a shell, not the seed's "Agent process".
    const shell = await page.locator(`.tab[data-id="${id}"] .title`).innerText()
    expect(await page.locator(`.terminal-pane[data-id="${id}"] .status`).innerText()).toBe(`${shell} exited with code 3`)
    expect(await attribute(id, 'data-exit-kind')).toBe('exited')
    expect(await page.locator(`.tab[data-id="${id}"]`).getAttribute('data-state')).toBe('ended')
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: `${artifacts}web-terminal.png` })
  })

  it('paces a 4 MB flood by drawing: every char arrives and is drawn, and the page stays responsive', async () => {
    // Why 4 MB (6 000 000 chars) is enough: it is 60 times the controller's high watermark (100 000
    // chars), so the shell is paused and resumed by the page's draw acks dozens of times, and its
    // 2 000 000 lines overrun the page's 5 000-row scrollback 400 times and the mirror's 1 000 rows
    // 2 000 times. The
    // responsiveness probe runs after 1 000 000 chars are drawn, with most of the flood still to
    // come. A larger flood repeats the same cycle (20 MB cost a minute of a loaded 2-core run).
    const id = await openTerminal('yes | head -c 4000000')
    // The page answers while the flood runs: its main thread is not starved by output.
    await waitFor(async () => (Number(await attribute(id, 'data-drawn-chars')) > 1_000_000 ? true : undefined), 'the flood to start', 20_000)
    expect(await page.evaluate(() => document.querySelectorAll('.terminal-pane').length)).toBeGreaterThan(0)
    await waitForState(id, 'ended', 120_000)
    // `yes` writes "y\n"; the PTY turns each \n into \r\n: 2 000 000 lines of 3 chars.
    expect(Number(await attribute(id, 'data-received-chars'))).toBe(6_000_000)
    expect(Number(await attribute(id, 'data-drawn-chars'))).toBe(6_000_000)
    expect(await page.locator(`.terminal-pane[data-id="${id}"] .status`).innerText()).toBe('yes | head -c 4000000 exited with code 0')
    const shell = await openTerminal()
    await typeLine(shell, 'echo after-flood')
    await waitForScreen(shell, /^after-flood\s*$/m)
  }, 150_000)

  it('closing a tab stops its PTY: neither the shell nor its background job survives', async () => {
    const keep = await openTerminal()
    const closing = await openTerminal()
    await typeLine(closing, 'sleep 1000 & echo "PIDS:$$:$!"')
    const [, shellPid, jobPid] = (await waitForScreen(closing, /PIDS:(\d+):(\d+)/)).map(Number)
    expect(isDead(shellPid as number)).toBe(false)
    expect(isDead(jobPid as number)).toBe(false)

    await page.click(`.tab[data-id="${closing}"] .close`)
    await page.waitForSelector(`.terminal-pane[data-id="${closing}"]`, { state: 'detached', timeout: SHOW_TIMEOUT_MS })
    // The tab goes only after the server's verified stop: the processes are gone by then.
    expect(isDead(shellPid as number)).toBe(true)
    expect(isDead(jobPid as number)).toBe(true)
    expect(await attribute(keep, 'data-state')).toBe('live')
  })

  it('a tab whose × is clicked twice sends one close, and goes once its process is gone', async () => {
    // Hang-up and TERM ignored: the stop takes the grace period and a kill, time for the second click.
    const id = await openTerminal(`trap '' HUP TERM; sleep 4646 & echo "PIDS:$$:$!"; wait`)
    const [, shellPid, jobPid] = (await waitForScreen(id, /PIDS:(\d+):(\d+)/)).map(Number)
    await page.locator(`.tab[data-id="${id}"] .close`).click({ clickCount: 2 })
    await page.waitForSelector(`.terminal-pane[data-id="${id}"]`, { state: 'detached', timeout: SHOW_TIMEOUT_MS })
    expect(isDead(shellPid as number)).toBe(true)
    expect(isDead(jobPid as number)).toBe(true)
    expect(sentByPage.filter((frame) => frame.type === 'close' && frame.id === id)).toHaveLength(1)
  })

  it('a reload re-attaches to the running terminal and repaints its screen', async () => {
    const id = await openTerminal()
    await typeLine(id, 'MARK=same-shell; echo before-reload')
    await waitForScreen(id, /^before-reload\s*$/m)
    await page.reload()
    await page.waitForSelector('body[data-connection="open"]')
    await page.waitForSelector(`.tab[data-id="${id}"]`)
    await page.click(`.tab[data-id="${id}"]`)
    await waitForState(id, 'live')
    await waitForScreen(id, /^before-reload\s*$/m) // painted from the server's snapshot
    await typeLine(id, 'echo "mark:$MARK"')
    await waitForScreen(id, /^mark:same-shell\s*$/m) // the same shell, still running
  })

  describe('refuses sockets that are not its page, and keeps serving the page', () => {
    const wsUrl = (query: string): string => `${server.origin.replace('http', 'ws')}/ws${query}`

    /** Answers the HTTP status of a refused upgrade, or 101 when it was accepted. */
    function upgradeStatus(url: string, origin: string): Promise<number> {
      return new Promise((resolve, reject) => {
        const socket = new WebSocket(url, { origin })
        socket.on('unexpected-response', (_request, response) => {
          resolve(response.statusCode ?? 0)
          socket.terminate()
        })
        socket.on('open', () => {
          resolve(101)
          socket.close()
        })
        socket.on('error', (error) => reject(error))
      })
    }

    /** Connect as the page would, send `frame`, and answer the close code the server chose. */
    function closeCodeAfter(frame: string | Buffer): Promise<number> {
      return new Promise((resolve, reject) => {
        const socket = new WebSocket(wsUrl(`?token=${server.token}`), { origin: server.origin })
        socket.on('open', () => socket.send(frame))
        socket.on('close', (code) => resolve(code))
        socket.on('error', () => undefined) // a refused frame may also surface as an error first
        setTimeout(() => reject(new Error('the server did not close the socket')), SHOW_TIMEOUT_MS).unref()
      })
    }

    it('a socket without the token, with a wrong one, or from a foreign Origin is refused', async () => {
      expect(await upgradeStatus(wsUrl(''), server.origin)).toBe(401)
      expect(await upgradeStatus(wsUrl('?token=guess'), server.origin)).toBe(401)
      expect(await upgradeStatus(wsUrl(`?token=${server.token}`), 'http://evil.example')).toBe(403)
      expect(await upgradeStatus(wsUrl(`?token=${server.token}`), 'http://localhost:1')).toBe(403)
      expect(await upgradeStatus(wsUrl(`?token=${server.token}`), server.origin)).toBe(101)
    })

    it('garbage closes that socket only; the page keeps its terminals', async () => {
      const id = await openTerminal()
      const garbage = [
        'not json',
        '[1,2,3]',
        JSON.stringify({ type: 'open', cols: 0, rows: 24 }),
        JSON.stringify({ type: 'input', id, data: 'echo pwned\r', kind: 'launch' }),
        JSON.stringify({ type: 'input', id, data: 'echo pwned\r', kind: 'driving', extra: 1 }),
        JSON.stringify({ type: 'ack', id, chars: -5, generation: 1 }),
        JSON.stringify({ type: 'input', id, data: 'a\uD800', kind: 'driving' }), // a lone surrogate: no UTF-8 for it
        JSON.stringify({ type: 'resize', id, cols: 80, rows: 1e9 }),
        Buffer.from([0xde, 0xad]),
      ]
      for (const frame of garbage) expect(await closeCodeAfter(frame)).toBe(PROTOCOL_VIOLATION_CLOSE_CODE)
      expect(await closeCodeAfter('x'.repeat(70_000))).toBe(1009) // over maxPayload: "message too big"
      await typeLine(id, 'echo still-serving')
      await waitForScreen(id, /^still-serving\s*$/m)
      expect(await screenText(id)).not.toMatch(/^pwned/m)
    })
  })
})
