import type {
  ProviderSpawnOptions,
  PtyDataEvent,
  PtyExitEvent,
  PtyForegroundProcessEvidence,
  PtyIncarnationId,
  PtyOutputLossEvent,
  PtySpawnResult,
  WriteSettlement,
} from '../contracts/index.js'
import type { FakePtyInspection, FakeWrite } from './fake-pty-provider-types.js'
import type { FakeShutdownBehaviour, FakeSpawnScript } from './fake-spawn-script.js'

// Per-PTY state: what the fake remembers about one incarnation behind a PTY id, the defaults it
// starts with, and the read-only view a test inspects.

/** The first pid the fake hands out; looks like a real pid and never collides with 0 or 1, which mean something special. */
export const FAKE_PID_BASE = 1000

/** Columns when a spawn names none: the contract's documented default. */
export const FAKE_DEFAULT_COLS = 80

/** Rows when a spawn names none: the contract's documented default. */
export const FAKE_DEFAULT_ROWS = 24

/** The signal a confirmed graceful stop reports: SIGHUP, what closing a terminal sends. */
export const FAKE_GRACEFUL_STOP_SIGNAL = 1

/** The signal a confirmed immediate stop (and `dispose`) reports: SIGKILL. */
export const FAKE_IMMEDIATE_STOP_SIGNAL = 9

/** The foreground process name of a fake PTY spawned without a `file`. */
export const FAKE_DEFAULT_PROCESS_NAME = 'fake-shell'


/** An event produced while the PTY's producer was paused (or behind such an event), waiting to be delivered in order. */
export type HeldEvent = { kind: 'data'; event: PtyDataEvent } | { kind: 'loss'; event: PtyOutputLossEvent } | { kind: 'exit'; event: PtyExitEvent }

/** One incarnation behind a fake PTY id: its process state, its I/O so far, and what the test scripted for it. */
export type FakePtyRecord = {
  id: string
  incarnationId: PtyIncarnationId
  pid: number
  cols: number
  rows: number
  /** `replaced`: a later spawn reused the id while it ran; `removed`: its hung spawn was failed. */
  state: 'live' | 'exited' | 'replaced' | 'removed'
  spawnPending: boolean
  paused: boolean
  held: HeldEvent[]
  /** Whether a stop of this incarnation was requested (the first one decides `diedBeforeStopRequest`). */
  stopRequested?: boolean
  writes: FakeWrite[]
  acknowledgedChars: number
  producedChars: number
  buffer: string
  exit: PtyExitEvent | null
  options: ProviderSpawnOptions
  script: FakeSpawnScript
  liveness: boolean | null | undefined
  writeSettlement: WriteSettlement | undefined
  /**
   * While not `null`, the program reads no input (`setInputHeld`): the writes the provider holds
   * for it, oldest first, each settled when released (as it would have been) or dropped at the end.
   */
  heldInput: FakeHeldWrite[] | null
  shutdownBehaviour: FakeShutdownBehaviour
  hostReportsChildExitStatus: boolean | undefined
  foregroundProcess: string | null
  hasChildProcesses: boolean | null
  foregroundEvidence: PtyForegroundProcessEvidence | null
  inputModeResets: number
}

/** A write the fake holds for a program that reads no input (see `FakePtyRecord.heldInput`). */
export type FakeHeldWrite = {
  /** The write, as `writes` will record it once it settles. */
  write: FakeWrite
  /** Settle the caller's promise. */
  settle: (settlement: WriteSettlement) => void
}

/**
 * Hand on or drop the writes the fake holds for `pty`: each `accepted` (or as scripted) and
 * recorded in `writes` — what a program reading again would get — or, with `dropped`, settled with
 * that refusal and recorded so (the PTY ended before any byte of it could reach its program). The
 * input is no longer held after either.
 */
export function settleHeldInput(pty: FakePtyRecord, dropped?: WriteSettlement): void {
  const held = pty.heldInput
  pty.heldInput = null
  for (const entry of held ?? []) {
    const settlement = dropped ?? entry.write.settlement
    pty.writes.push({ ...entry.write, settlement })
    entry.settle(settlement)
  }
}

/** A spawn whose reply a `hang` script holds until `releaseSpawn` or `failSpawn`. */
export type PendingSpawn = {
  record: FakePtyRecord
  result: PtySpawnResult
  resolve: (result: PtySpawnResult) => void
  reject: (error: unknown) => void
}

function basename(file: string): string {
  const parts = file.split(/[\\/]/)
  return parts[parts.length - 1] || file
}

/** What a new incarnation starts from: its ids, how it was spawned, and the number it was minted as. */
export type NewFakePty = {
  id: string
  incarnationId: PtyIncarnationId
  /** The provider-wide count of incarnations, this one included (the default pid is derived from it). */
  incarnationNumber: number
  spawnOptions: ProviderSpawnOptions
  script: FakeSpawnScript
  hostReportsChildExitStatus: boolean | undefined
}

/** A live record for a freshly spawned incarnation, from its script and spawn options. */
export function createFakePtyRecord(fresh: NewFakePty): FakePtyRecord {
  const { script, spawnOptions } = fresh
  return {
    id: fresh.id,
    incarnationId: fresh.incarnationId,
    pid: script.pid ?? FAKE_PID_BASE + fresh.incarnationNumber,
    cols: script.cols ?? spawnOptions.cols ?? FAKE_DEFAULT_COLS,
    rows: script.rows ?? spawnOptions.rows ?? FAKE_DEFAULT_ROWS,
    state: 'live',
    spawnPending: script.hang === true,
    paused: false,
    held: [],
    writes: [],
    acknowledgedChars: 0,
    producedChars: 0,
    buffer: '',
    exit: null,
    options: spawnOptions,
    script,
    liveness: script.liveness,
    writeSettlement: script.writeSettlement,
    heldInput: null,
    shutdownBehaviour: script.shutdown ?? 'confirm',
    hostReportsChildExitStatus: fresh.hostReportsChildExitStatus,
    foregroundProcess: spawnOptions.file === undefined ? FAKE_DEFAULT_PROCESS_NAME : basename(spawnOptions.file),
    hasChildProcesses: false,
    foregroundEvidence: null,
    inputModeResets: 0,
  }
}

/** The test's copy-out view of a record (see `getPty`): arrays copied, accepted writes joined. */
export function inspectFakePty(pty: FakePtyRecord, incarnations: readonly PtyIncarnationId[]): FakePtyInspection {
  return {
    id: pty.id,
    incarnationId: pty.incarnationId,
    incarnations: [...incarnations],
    pid: pty.pid,
    cols: pty.cols,
    rows: pty.rows,
    live: pty.state === 'live',
    paused: pty.paused,
    spawnPending: pty.spawnPending,
    written: pty.writes
      .filter((write) => write.settlement.kind === 'accepted')
      .map((write) => write.data)
      .join(''),
    writtenBytes: bytesWritten(pty.writes),
    writes: [...pty.writes],
    acknowledgedChars: pty.acknowledgedChars,
    inputModeResets: pty.inputModeResets,
    producedChars: pty.producedChars,
    heldEventCount: pty.held.length,
    exit: pty.exit,
    spawnOptions: pty.options,
    script: pty.script,
  }
}

const utf8Encoder = new TextEncoder()

/** The bytes of every accepted write, in order: a string as UTF-8, bytes as written. */
function bytesWritten(writes: readonly FakeWrite[]): Uint8Array {
  const pieces = writes.filter((write) => write.settlement.kind === 'accepted').map((write) => write.bytes ?? utf8Encoder.encode(write.data))
  const all = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0))
  let at = 0
  for (const piece of pieces) {
    all.set(piece, at)
    at += piece.length
  }
  return all
}
