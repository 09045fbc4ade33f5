// The web terminal's page: tabs of xterm.js terminals, each a PTY on the server.
//
// - Output is acknowledged from xterm.js's write callback — once it is parsed, not when it arrives —
//   so a flood is paced by how fast this page draws (the server's controller pauses the program
//   when too much is unacknowledged).
// - Keys go out with input kind `driving` (raw bytes from xterm.js's `onBinary` as `binary`
//   frames, which the server writes as bytes); resizes follow the container.
// - An exit is shown after the last output is drawn, in words; a terminal whose state the page no
//   longer knows (socket lost, taken by another window) is never shown as live.
//
// Each terminal's <section> carries its state in data attributes (state, cols, rows, received and
// drawn chars) so tests and tools can read what the page shows.
import { Terminal } from '@xterm/xterm'
import { MAX_COMMAND_LENGTH, splitInput, type ClientMessage, type ServerMessage, type TerminalStatus } from '../protocol.js'
import { fitTerminal } from './fit.js'

/** Acknowledge at least this many drawn chars at once (ptykit's FLOW_CONTROL_ACK_SIZE_CHARS). */
const ACK_BATCH_CHARS = 5_000

/** The size a terminal asks for before it can measure its container. */
const DEFAULT_SIZE = { cols: 80, rows: 24 }

type TabState = 'live' | 'ended' | 'closing' | 'detached' | 'disconnected'

type Tab = {
  id: string
  terminal: Terminal
  section: HTMLElement
  screen: HTMLElement
  status: HTMLElement
  label: HTMLElement
  state: TabState
  /** Output chars received from the server, and parsed by xterm.js. */
  received: number
  drawn: number
  /** Drawn chars not acknowledged yet. */
  unacknowledged: number
  /** The `generation` of the `attached` this tab was drawn from: its acks name it. */
  generation: number
}

const tabs = new Map<string, Tab>()
let activeId: string | undefined

const element = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T
const tabBar = element('tabs')
const terminals = element('terminals')
const connection = element('connection')
const openForm = element<HTMLFormElement>('open-form')
const commandInput = element<HTMLInputElement>('command')

const token = new URLSearchParams(location.search).get('token') ?? ''
const socket = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(token)}`)

function send(message: ClientMessage): void {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message))
}

socket.addEventListener('open', () => {
  setConnection('open', 'connected')
  send({ type: 'attach' }) // show every terminal the server holds: a reload picks up where it was
})
socket.addEventListener('close', (event) => {
  // 1001 (going away) is the server's shutdown: it stopped every terminal first and sent `closed`
  // for each, so the tabs are gone; any other close is a broken connection.
  setConnection('closed', event.code === 1001 ? 'the server stopped, and every terminal with it' : 'disconnected from the server: reload the page to re-attach')
  for (const tab of tabs.values()) {
    if (tab.state === 'live' || tab.state === 'closing') {
      setState(tab, 'disconnected', 'disconnected: state unknown (reload to re-attach)')
    }
  }
})
socket.addEventListener('message', (event: MessageEvent<string>) => receive(JSON.parse(event.data) as ServerMessage))

function receive(message: ServerMessage): void {
  if (message.type === 'error') {
    connection.textContent = message.message
    return
  }
  if (message.type === 'attached') {
    attach(message)
    return
  }
  const tab = tabs.get(message.id)
  if (tab === undefined) return
  switch (message.type) {
    case 'output':
      write(tab, message.data)
      return
    case 'exit':
      // Shown once everything before it is drawn: never "ended" above output still being written.
      tab.terminal.write('', () => showStatus(tab, message.status))
      return
    case 'detached':
      if (tab.state === 'live') setState(tab, 'detached', 'shown in another window: reload to take it back')
      return
    case 'closed':
      remove(tab)
      return
  }
}

function attach(message: ServerMessage & { type: 'attached' }): void {
  // A terminal this page already shows is attached again when the server repaints it (the page
  // fell behind and output was dropped): the new tab replaces it, and stays the active one.
  const previous = tabs.get(message.id)
  const wasActive = previous !== undefined && activeId === message.id
  if (previous !== undefined) remove(previous)
  const section = document.createElement('section')
  section.className = 'terminal-pane'
  section.dataset['id'] = message.id
  const screen = document.createElement('div')
  screen.className = 'screen'
  const status = document.createElement('div')
  status.className = 'status'
  section.append(screen, status)
  terminals.append(section)

  const label = document.createElement('div')
  label.className = 'tab'
  label.dataset['id'] = message.id
  label.setAttribute('role', 'tab')
  const title = document.createElement('span')
  title.className = 'title'
  title.textContent = message.title
  const close = document.createElement('button')
  close.className = 'close'
  close.title = 'Close: stops the process'
  close.textContent = '×'
  label.append(title, close)
  tabBar.append(label)

  const terminal = new Terminal({
    cols: message.cols,
    rows: message.rows,
    fontFamily: 'monospace',
    fontSize: 14,
    scrollback: 5_000,
  })
  const tab: Tab = { id: message.id, terminal, section, screen, status, label, state: 'live', received: 0, drawn: 0, unacknowledged: 0, generation: message.generation }
  tabs.set(message.id, tab)
  terminal.open(screen)
  // The snapshot repaints the screen as the server's mirror has it; it is not PTY output, so it is
  // neither counted nor acknowledged.
  terminal.write(message.snapshot)
  terminal.onData((data) => {
    // A paste may be longer than one frame may be: consecutive frames, in order (the server writes
    // them in order), never one the server would refuse by closing the page's socket.
    if (tab.state === 'live') for (const piece of splitInput(data)) send({ type: 'input', id: tab.id, data: piece, kind: 'driving' })
  })
  // Raw bytes (a mouse report in the default X10 encoding past column or row 95 holds bytes
  // 0x80–0xFF): one character per byte, which the server writes as bytes — as `input`, they would
  // reach the program as UTF-8, two bytes each.
  terminal.onBinary((data) => {
    if (tab.state === 'live') for (const piece of splitInput(data)) send({ type: 'binary', id: tab.id, data: piece })
  })
  terminal.onResize(({ cols, rows }) => {
    section.dataset['cols'] = String(cols)
    section.dataset['rows'] = String(rows)
    if (tab.state === 'live') send({ type: 'resize', id: tab.id, cols, rows })
  })
  section.dataset['cols'] = String(message.cols)
  section.dataset['rows'] = String(message.rows)
  label.addEventListener('click', () => activate(tab))
  close.addEventListener('click', (event) => {
    event.stopPropagation()
    closeTab(tab)
  })
  updateCounts(tab)
  if (message.status.state === 'ended') showStatus(tab, message.status)
  else setState(tab, 'live', 'running')
  if (message.opened || wasActive || activeId === undefined) activate(tab)
  else section.hidden = true
}

function write(tab: Tab, data: string): void {
  tab.received += data.length
  tab.terminal.write(data, () => {
    tab.drawn += data.length
    tab.unacknowledged += data.length
    // Batch acks, but never leave drawn output unacknowledged once the page has caught up.
    if (tab.unacknowledged >= ACK_BATCH_CHARS || tab.drawn === tab.received) {
      send({ type: 'ack', id: tab.id, chars: tab.unacknowledged, generation: tab.generation })
      tab.unacknowledged = 0
    }
    updateCounts(tab)
  })
  updateCounts(tab)
}

function updateCounts(tab: Tab): void {
  tab.section.dataset['receivedChars'] = String(tab.received)
  tab.section.dataset['drawnChars'] = String(tab.drawn)
}

function showStatus(tab: Tab, status: TerminalStatus): void {
  if (status.state === 'live') return
  tab.terminal.options.disableStdin = true
  tab.section.dataset['exitKind'] = status.kind
  setState(tab, 'ended', status.description)
}

function setState(tab: Tab, state: TabState, text: string): void {
  tab.state = state
  tab.section.dataset['state'] = state
  tab.label.dataset['state'] = state
  tab.status.textContent = text
}

function activate(tab: Tab): void {
  activeId = tab.id
  for (const other of tabs.values()) {
    other.section.hidden = other !== tab
    other.label.setAttribute('aria-selected', String(other === tab))
  }
  fitTerminal(tab.terminal, tab.screen)
  // A terminal opened just now may get its cell size only once it rendered: fit again then.
  requestAnimationFrame(() => fitTerminal(tab.terminal, tab.screen))
  tab.terminal.focus()
}

function closeTab(tab: Tab): void {
  if (tab.state === 'disconnected' || tab.state === 'detached') {
    remove(tab) // nothing to stop from here: the server still holds it for the next page
    return
  }
  // Its close was sent: the server answers `closed` once that stop is known. A second one would
  // only ask again (the server makes it join the running stop, so it gains nothing).
  if (tab.state === 'closing') return
  setState(tab, 'closing', 'stopping…')
  send({ type: 'close', id: tab.id })
}

function remove(tab: Tab): void {
  tabs.delete(tab.id)
  tab.terminal.dispose()
  tab.section.remove()
  tab.label.remove()
  if (activeId === tab.id) {
    activeId = undefined
    const next = [...tabs.values()].at(-1)
    if (next !== undefined) activate(next)
  }
}

function setConnection(state: 'open' | 'closed', text: string): void {
  document.body.dataset['connection'] = state
  connection.textContent = text
}

// A refusal shown on the field lasts until it is edited (else the form stays invalid for good).
commandInput.addEventListener('input', () => commandInput.setCustomValidity(''))

openForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const active = activeId === undefined ? undefined : tabs.get(activeId)
  const size = active === undefined ? DEFAULT_SIZE : { cols: active.terminal.cols, rows: active.terminal.rows }
  const command = commandInput.value.trim()
  // Refused here, not by the server (which closes the page's socket on a malformed frame).
  const refusal =
    command.length > MAX_COMMAND_LENGTH
      ? `The command is ${command.length} characters long; the server runs at most ${MAX_COMMAND_LENGTH}.`
      : (command as { isWellFormed?: () => boolean }).isWellFormed?.() === false
        ? 'The command contains a lone surrogate (text that is not well-formed).'
        : ''
  commandInput.setCustomValidity(refusal)
  if (refusal !== '') {
    commandInput.reportValidity()
    return
  }
  send(command === '' ? { type: 'open', ...size } : { type: 'open', ...size, command })
  commandInput.value = ''
})

// Fit the visible terminal whenever its container changes size (window resize, devtools, zoom).
let fitPending = false
new ResizeObserver(() => {
  if (fitPending) return
  fitPending = true
  requestAnimationFrame(() => {
    fitPending = false
    const active = activeId === undefined ? undefined : tabs.get(activeId)
    if (active !== undefined) fitTerminal(active.terminal, active.screen)
  })
}).observe(terminals)
